"""One federated client of the PyTorch example: a separate OS process that trains DigitsMlp on
its own shard of the Digits training set and sends its state_dict delta for ``--rounds`` rounds.

Started by federated_digits.py; prints ``READY`` once connected, starts when it reads a line on
stdin (so that all clients begin in the same round), and prints ``SENT <round>`` per update.
"""

from __future__ import annotations

import argparse
import sys

import torch

from digits_common import load_digits, model_from, shard, train_locally
from privagg_client import PrivaggClient, state_dict_delta
from kafka_config import read_kafka_config


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--spec", required=True)
    parser.add_argument("--bootstrap-servers", required=True)
    parser.add_argument("--index", type=int, required=True, help="this client's shard, 0-based")
    parser.add_argument("--clients", type=int, required=True, help="number of shards")
    parser.add_argument("--rounds", type=int, required=True)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--lr", type=float, default=0.3)
    parser.add_argument("--kafka-config", help="librdkafka properties file (key=value lines)")
    args = parser.parse_args()

    torch.set_num_threads(1)  # several clients share the machine
    train, _ = load_digits()
    data = shard(train, args.index, args.clients)
    kafka = read_kafka_config(args.kafka_config)
    with PrivaggClient.from_spec(
        args.spec, args.bootstrap_servers, f"digits-client-{args.index}", kafka_config=kafka
    ) as client:
        client.poll(1.0)  # connects and starts reading the rounds and models topics
        print("READY", flush=True)
        sys.stdin.readline()  # the launcher's go, once every client is ready
        for _ in range(args.rounds):
            # The next round this client has not sent to, with time left to train.
            announcement = client.wait_for_round(timeout=120, min_seconds_left=1.0)
            base = client.wait_for_model(announcement.base_model_round, timeout=60)
            model = model_from(base.tensors)
            train_locally(model, data, args.epochs, args.lr, seed=1000 * announcement.round + args.index)
            client.send_update(announcement.round, state_dict_delta(model.state_dict(), base.tensors))
            print(f"SENT {announcement.round}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
