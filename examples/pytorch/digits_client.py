"""One federated client of the PyTorch example: a separate OS process that trains DigitsMlp on
its own shard of the Digits training set and sends its state_dict delta for ``--rounds`` rounds,
through ``PrivaggClient.run``.

Started by federated_digits.py; prints ``READY`` once connected, starts when it reads a line on
stdin (so that all clients begin in the same round), and prints ``SENT <round>`` per update.
With DP-SGD (the default) it also prints ``SAMPLE_EPSILON <round> <epsilon>``: the sample-level
epsilon its own examples have spent over every round so far.
"""

from __future__ import annotations

import argparse
import sys
from typing import Dict

import numpy as np
import torch

from digits_common import add_training_options, load_digits, model_from, shard, train_locally
from privagg_client import GlobalModel, PrivaggClient, state_dict_delta
from privagg_client.privacy.dp_sgd import DpSgd, DpSgdConfig
from kafka_config import read_kafka_config


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.ArgumentDefaultsHelpFormatter
    )
    parser.add_argument("--spec", required=True)
    parser.add_argument("--bootstrap-servers", required=True)
    parser.add_argument("--index", type=int, required=True, help="this client's shard, 0-based")
    parser.add_argument("--clients", type=int, required=True, help="number of shards")
    parser.add_argument("--rounds", type=int, required=True)
    add_training_options(parser)
    parser.add_argument("--kafka-config", help="librdkafka properties file (key=value lines)")
    args = parser.parse_args()

    torch.set_num_threads(1)  # several clients share the machine
    train, _ = load_digits()
    data = shard(train, args.index, args.clients)
    dp_sgd = None
    if args.dp_sgd_noise > 0:
        config = DpSgdConfig.for_batch_size(
            len(data[0]),
            args.batch,
            noise_multiplier=args.dp_sgd_noise,
            max_grad_norm=args.dp_sgd_clip,
            learning_rate=args.lr,
            epochs_per_round=args.epochs,
        )
        dp_sgd = DpSgd(torch.nn.functional.cross_entropy, config)
    kafka = read_kafka_config(args.kafka_config)
    with PrivaggClient.from_spec(
        args.spec, args.bootstrap_servers, f"digits-client-{args.index}", kafka_config=kafka
    ) as client:
        client.poll(1.0)  # connects and starts reading the rounds and models topics
        print("READY", flush=True)
        sys.stdin.readline()  # the launcher's go, once every client is ready

        def train_round(base: GlobalModel, round_number: int) -> Dict[str, np.ndarray]:
            """Local epochs from the round's base model; the update is the state_dict delta."""
            model = model_from(base.tensors)
            if dp_sgd is None:
                seed = 1000 * round_number + args.index
                train_locally(model, data, args.epochs, args.lr, seed, args.batch)
            else:
                report = dp_sgd.train(model, *data)
                print(f"SAMPLE_EPSILON {round_number} {report.run_epsilon.epsilon}", flush=True)
            return state_dict_delta(model.state_dict(), base.tensors)

        # Each round: the next round this client has not sent to, with time left to train; its
        # base model; train; send. The launcher evaluates the released models.
        result = client.run(
            train_round,
            rounds=args.rounds,
            round_timeout=120,
            model_timeout=60,
            min_seconds_left=1.0,
            wait_for_last_model=False,
            on_sent=lambda round_number: print(f"SENT {round_number}", flush=True),
        )
    spent = client.budget_spent
    if spent is not None and len(result.rounds) < args.rounds:
        print(
            f"the job's privacy budget is spent: no round opens from round {spent.round} on "
            f"(final model: round {spent.base_model_round}), after {len(result.rounds)} of "
            f"{args.rounds} rounds here; to train again, start the job with another --state-dir "
            "or jobId",
            file=sys.stderr,
        )
        return 1
    if result.job_ended:
        print(
            f"the job opened no more rounds after {len(result.rounds)} of {args.rounds} "
            "(its budget is spent, or it was stopped)",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
