"""Federated training of a small PyTorch network on the 8x8 Digits through a running privagg job.

Starts ``--clients`` client processes (digits_client.py), each training DigitsMlp on its own
shard of the training set with DP-SGD (sample-level privacy for its examples; ``--dp-sgd-noise
0`` for plain SGD) and sending its state_dict delta every round, and prints the test accuracy,
the privacy statement's (client-level) epsilon of every model the job releases for those rounds
and the clients' sample-level epsilon::

    python3 examples/pytorch/federated_digits.py --bootstrap-servers localhost:9092

Exits 0 when every client sent ``--rounds`` updates and their rounds' models were evaluated.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import threading
import time
from collections import defaultdict
from pathlib import Path
from typing import Dict, List, Optional, Set

import torch

from digits_common import add_training_options, accuracy, load_digits, model_from
from kafka_config import read_kafka_config
from privagg_client import GlobalModel, JobConfig, PrivaggClient

HERE = Path(__file__).resolve().parent
LATE_MODEL_SECONDS = 60


class ClientProcesses:
    """The client processes and what they report on stdout (READY, SENT <round>). Once all are
    ready, each is told to start, so that they begin in the same round."""

    def __init__(self, command: List[List[str]]) -> None:
        self.sent: Dict[int, Set[int]] = defaultdict(set)
        self.sample_epsilon: Dict[int, float] = {}
        self.ready: Set[int] = set()
        self.lock = threading.Lock()
        self.started = time.time()
        self.processes = [
            subprocess.Popen(c, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
            for c in command
        ]
        for index, process in enumerate(self.processes):
            threading.Thread(target=self._read, args=(index, process), daemon=True).start()

    def _read(self, index: int, process: subprocess.Popen) -> None:
        assert process.stdout is not None
        for line in process.stdout:
            line = line.rstrip("\n")
            if line.startswith("SENT "):
                with self.lock:
                    self.sent[int(line.split()[1])].add(index)
            elif line.startswith("SAMPLE_EPSILON "):
                _, round_text, epsilon = line.split()
                with self.lock:
                    r = int(round_text)
                    self.sample_epsilon[r] = max(self.sample_epsilon.get(r, 0.0), float(epsilon))
            elif line == "READY":
                with self.lock:
                    self.ready.add(index)
                    if len(self.ready) == len(self.processes):
                        print(
                            f"{len(self.ready)} clients ready after {time.time() - self.started:.1f} s",
                            flush=True,
                        )
                        for p in self.processes:
                            assert p.stdin is not None
                            p.stdin.write("go\n")
                            p.stdin.flush()
            else:
                print(f"client {index}: {line}", flush=True)

    def senders(self, round_number: int) -> int:
        with self.lock:
            return len(self.sent.get(round_number, ()))

    def sample_epsilon_through(self, round_number: int) -> Optional[float]:
        """The largest sample-level epsilon a client reported for rounds up to this one."""
        with self.lock:
            spent = [e for r, e in self.sample_epsilon.items() if r <= round_number]
            return max(spent) if spent else None

    def rounds(self) -> List[int]:
        with self.lock:
            return sorted(self.sent)

    def finished(self) -> bool:
        return all(p.poll() is not None for p in self.processes)

    def failed(self) -> List[int]:
        return [i for i, p in enumerate(self.processes) if p.poll() not in (None, 0)]

    def stop(self) -> None:
        for p in self.processes:
            if p.poll() is None:
                p.terminate()
        for p in self.processes:
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()


class HelpFormatter(argparse.RawDescriptionHelpFormatter, argparse.ArgumentDefaultsHelpFormatter):
    """The description as written, and every option's default."""


def sample_level(epsilon: Optional[float]) -> str:
    """The clients' DP-SGD statement: about one example of a client, not one client."""
    if epsilon is None:
        return ""
    return f"; sample-level epsilon (DP-SGD, one example of a client) {epsilon:.4f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=HelpFormatter)
    parser.add_argument("--bootstrap-servers", required=True)
    parser.add_argument("--spec", default=str(HERE / "digits-mlp.yaml"), help="the job's spec YAML")
    parser.add_argument("--clients", type=int, default=4, help="client processes, one shard each")
    parser.add_argument("--rounds", type=int, default=8, help="updates each client sends")
    add_training_options(parser)
    parser.add_argument("--kafka-config", help="librdkafka properties file (key=value lines)")
    parser.add_argument("--timeout", type=float, default=600, help="seconds before giving up")
    args = parser.parse_args()

    torch.set_num_threads(1)
    job = JobConfig.from_spec(args.spec)
    _, test = load_digits()
    client_command = [
        sys.executable, str(HERE / "digits_client.py"), "--spec", args.spec,
        "--bootstrap-servers", args.bootstrap_servers, "--clients", str(args.clients),
        "--rounds", str(args.rounds), "--epochs", str(args.epochs), "--lr", str(args.lr),
        "--batch", str(args.batch), "--dp-sgd-noise", str(args.dp_sgd_noise),
        "--dp-sgd-clip", str(args.dp_sgd_clip),
    ] + (["--kafka-config", args.kafka_config] if args.kafka_config else [])
    kafka = read_kafka_config(args.kafka_config)
    print(
        f"job {job.job_id}: {job.parameters} parameters; {args.clients} client processes x "
        f"{args.rounds} rounds, {len(test[1])} test images",
        flush=True,
    )
    clients = ClientProcesses([client_command + ["--index", str(i)] for i in range(args.clients)])
    observer = PrivaggClient(job, args.bootstrap_servers, "digits-evaluator", kafka_config=kafka)
    deadline = time.time() + args.timeout
    next_round: Optional[int] = None
    last: Optional[GlobalModel] = None
    last_accuracy = 0.0
    finished_at: Optional[float] = None
    try:
        while True:
            observer.poll(0.5)
            sent = clients.rounds()
            if sent and next_round is None:
                next_round = sent[0]
            while next_round is not None:
                model = observer.model(next_round)
                latest = observer.latest_model
                if model is None:
                    if latest is not None and latest.round > next_round:
                        print(f"round {next_round}: no model released", flush=True)
                        next_round += 1
                        continue
                    break
                last, last_accuracy = model, accuracy(model_from(model.tensors), test)
                print(
                    f"round {model.round}: test accuracy {last_accuracy:.3f}, epsilon "
                    f"{model.privacy.epsilon:.4f} (delta {model.privacy.delta:g}), "
                    f"{clients.senders(model.round)} of {args.clients} clients sent"
                    + sample_level(clients.sample_epsilon_through(model.round)),
                    flush=True,
                )
                next_round += 1
            failed = clients.failed()
            if failed:
                print(f"error: client processes {failed} failed", file=sys.stderr)
                return 1
            if clients.finished():
                if next_round is not None and sent and next_round > sent[-1]:
                    break
                finished_at = finished_at or time.time()
                if time.time() - finished_at > LATE_MODEL_SECONDS:
                    print(
                        f"error: no model for round {next_round} within {LATE_MODEL_SECONDS} s "
                        "after the clients finished (is the job's budget exhausted?)",
                        file=sys.stderr,
                    )
                    return 1
            if time.time() > deadline:
                print(f"error: not done within {args.timeout:g} s", file=sys.stderr)
                return 1
    finally:
        clients.stop()
        observer.close()
    assert last is not None
    p = last.privacy
    print(
        f"final: test accuracy {last_accuracy:.3f} after round {last.round} at epsilon "
        f"{p.epsilon:.4f} (delta {p.delta:g}, {p.accountant}; noise multiplier "
        f"{p.noise_multiplier:g}, clipNorm {p.clip_norm:g}, noise {p.noise_source})"
        + sample_level(clients.sample_epsilon_through(last.round)),
        flush=True,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
