"""Client-side privacy compared through a real privagg job: accuracy against the client's epsilon.

Starts ``privagg run`` (an embedded broker and a Flink MiniCluster) with one training job per
mechanism, all with the same server-side clipping and noise, and drives N in-process clients per
job: each round every client trains the round's base model on its shard (plain SGD, or DP-SGD),
applies its job's filter to the delta and sends it. The job clips, sums, noises and releases;
this script evaluates each released model on the test set. Mechanisms:

- server only: no client-side privacy (the job's client-level DP alone);
- DP-SGD at several noise multipliers (sample-level epsilon);
- Gaussian local DP at several per-round epsilons (the whole update, any adversary);
- private top-k (10% of the coordinates) at several per-round epsilons;
- NVIDIA FLARE's SVT filter at its defaults (replica; no finite epsilon holds, its own reading
  is reported as "claimed");
- keep the largest 10% (what FLARE's PercentilePrivacy does; no guarantee).

Writes DIR/client-privacy-<dataset>.csv (one row per job and round) and prints a summary::

    python3 examples/pytorch/compare_client_privacy.py --dataset digits --out /tmp/cmp
"""

from __future__ import annotations

import argparse
import csv
import gzip
import math
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np
import torch
from confluent_kafka import Producer
from torch import nn

from digits_common import DigitsMlp, accuracy, load_digits, shard, train_locally
from privagg_client import JobConfig, PrivaggClient, encode_update, state_dict_delta, to_state_dict
from privagg_client.privacy import local_dp
from privagg_client.privacy.dp_sgd import DpSgd, DpSgdConfig

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
FASHION = Path("/usr/share/datasets/fashion-mnist")
DELTA = 1e-5

Data = Tuple[torch.Tensor, torch.Tensor]


class Softmax(nn.Module):
    """Softmax regression on 784 pixels."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(784, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(x)


def load_fashion(train_examples: int) -> Tuple[Data, Data]:
    """The first ``train_examples`` training images and the 10,000 test images, pixels in [0, 1]."""

    def images(name: str) -> np.ndarray:
        with gzip.open(FASHION / name) as f:
            return np.frombuffer(f.read(), np.uint8, offset=16).reshape(-1, 784) / 255.0

    def labels(name: str) -> np.ndarray:
        with gzip.open(FASHION / name) as f:
            return np.frombuffer(f.read(), np.uint8, offset=8).astype(np.int64)

    x, y = images("train-images-idx3-ubyte.gz"), labels("train-labels-idx1-ubyte.gz")
    tx, ty = images("t10k-images-idx3-ubyte.gz"), labels("t10k-labels-idx1-ubyte.gz")
    as_tensors = lambda a, b: (torch.from_numpy(a.astype(np.float32)), torch.from_numpy(b))  # noqa: E731
    return as_tensors(x[:train_examples], y[:train_examples]), as_tensors(tx, ty)


@dataclass(frozen=True)
class Mechanism:
    """One job's client-side treatment: DP-SGD's noise multiplier (0: plain SGD) and a filter."""

    name: str
    parameter: str
    dp_sgd_noise: float = 0.0
    filter: Optional[Any] = None


def mechanisms(dimension: int, epsilons: List[float], dp_sgd_noises: List[float]) -> List[Mechanism]:
    k = max(1, dimension // 10)
    out = [Mechanism("server-only", "-")]
    out += [Mechanism("dp-sgd", f"z={z:g}", dp_sgd_noise=z) for z in dp_sgd_noises]
    out += [Mechanism("local-gaussian", f"eps={e:g}", filter=local_dp.GaussianLocalDp(1.0, e, DELTA)) for e in epsilons]
    # Each of the k values within 1 / sqrt(k): a full selection has norm 1, the server's clip norm.
    out += [Mechanism("private-top-k", f"eps={e:g}", filter=local_dp.PrivateTopK(k, 1 / math.sqrt(k), e)) for e in epsilons]
    out.append(Mechanism("flare-svt-defaults", "fraction=0.1", filter=local_dp.FlareSvtReplica()))
    out.append(Mechanism("keep-largest-no-dp", "fraction=0.1", filter=local_dp.KeepLargestNoGuarantee(0.1)))
    return out


def spec_yaml(job_id: str, tensors: Dict[str, Tuple[int, ...]], init: str, clients: int,
              round_seconds: int, server_noise: float, topics: str) -> str:
    lines = [f"jobId: {job_id}", "model:", "  tensors:"]
    lines += [f"    - {{name: {n}, shape: [{', '.join(map(str, s))}]}}" for n, s in tensors.items()]
    lines += [f"  {init}", "rounds:", f"  timeout: {round_seconds}s", f"  expectedClients: {clients}",
              "privacy:", "  clipNorm: 1.0", f"  noiseMultiplier: {server_noise}", "  delta: 1.0e-5",
              "  budgetEpsilon: .inf", "  accountant: rdp", "serverLearningRate: 1.0",
              f"topics: {{updates: {topics}.updates, models: {topics}.models, rounds: {topics}.rounds,"
              f" ledger: {topics}.ledger, rejects: {topics}.rejects}}"]
    return "\n".join(lines) + "\n"


def client_epsilon(m: Mechanism, ledger: local_dp.LocalDpLedger, dp_sgd_epsilon: float,
                   dimension: int) -> Tuple[float, float]:
    """(what holds, what the mechanism's own parameters claim) over the rounds so far."""
    if m.dp_sgd_noise > 0:
        return dp_sgd_epsilon, dp_sgd_epsilon
    if m.filter is None:
        return math.inf, math.inf
    if isinstance(m.filter, local_dp.FlareSvtReplica):
        return math.inf, ledger.rounds * m.filter.claimed_epsilon(dimension)
    spent = ledger.epsilon(DELTA)
    return spent, spent


def wait_for_port(port: int, job: "subprocess.Popen[bytes]", timeout: float) -> None:
    """Until the embedded broker accepts connections (or the job exits)."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        if job.poll() is not None:
            raise SystemExit(f"privagg run exited with {job.returncode}; see its log")
        with socket.socket() as s:
            if s.connect_ex(("localhost", port)) == 0:
                return
        time.sleep(1)
    raise SystemExit(f"no broker on localhost:{port} after {timeout:.0f} s")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dataset", choices=["digits", "fashion-mnist"], default="digits")
    parser.add_argument("--clients", type=int, default=20, help="clients per job, all in every round")
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--round-seconds", type=int, default=30, help="each round's window")
    parser.add_argument("--server-noise", type=float, default=0.5, help="the job's noise multiplier (clip norm 1)")
    parser.add_argument("--epsilons", default="1,10,100", help="per-round epsilons of the local filters")
    parser.add_argument("--dp-sgd-noises", default="0.7,1.0,2.0", help="DP-SGD noise multipliers")
    parser.add_argument("--lr", type=float, default=0.5, help="local learning rate")
    parser.add_argument("--batch", type=int, default=16, help="(expected) local batch")
    parser.add_argument("--port", type=int, default=19392, help="the embedded broker's port")
    parser.add_argument("--out", type=Path, required=True, help="directory for the CSV")
    args = parser.parse_args()

    torch.set_num_threads(1)
    torch.manual_seed(0)
    if args.dataset == "digits":
        train, test = load_digits()
        make_model: Callable[[], nn.Module] = DigitsMlp
        init = "init: random\n  initSeed: 7\n  initStd: 0.1"
    else:
        train, test = load_fashion(args.clients * 300)
        make_model = Softmax
        init = "init: zeros"
    template = make_model()
    tensors = {n: tuple(t.shape) for n, t in template.state_dict().items()}
    dimension = sum(t.numel() for t in template.state_dict().values())
    chosen = mechanisms(dimension, [float(e) for e in args.epsilons.split(",")],
                        [float(z) for z in args.dp_sgd_noises.split(",")])
    shards = [shard(train, i, args.clients) for i in range(args.clients)]
    args.out.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="privagg-compare-"))
    topics = f"compare-{args.dataset}-{int(time.time())}"
    specs = []
    for i, m in enumerate(chosen):
        path = work / f"job{i}.yaml"
        path.write_text(spec_yaml(f"{topics}-{i}", tensors, init, args.clients, args.round_seconds,
                                  args.server_noise, topics))
        specs.append(path)
    bootstrap = f"localhost:{args.port}"
    command = [str(ROOT / "privagg"), "run", "--embedded-kafka-port", str(args.port),
               "--state-dir", str(work / "state")] + [a for p in specs for a in ("--spec", str(p))]
    log = open(work / "privagg-run.log", "w")
    job = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
    print(f"{args.dataset}: {dimension} parameters, {len(chosen)} jobs x {args.clients} clients x "
          f"{args.rounds} rounds; privagg run log {work / 'privagg-run.log'}", flush=True)
    rows: List[Dict[str, Any]] = []
    observers: List[PrivaggClient] = []
    try:
        wait_for_port(args.port, job, timeout=300)
        configs = [JobConfig.from_spec(str(p)) for p in specs]
        observers += [PrivaggClient(c, bootstrap, f"evaluator-{i}") for i, c in enumerate(configs)]
        producer = Producer({"bootstrap.servers": bootstrap})
        trainers = [[DpSgd(nn.functional.cross_entropy, DpSgdConfig.for_batch_size(
            len(s[0]), args.batch, noise_multiplier=m.dp_sgd_noise, max_grad_norm=1.0,
            learning_rate=args.lr)) if m.dp_sgd_noise > 0 else None for s in shards] for m in chosen]
        ledgers = [local_dp.LocalDpLedger() for _ in chosen]
        sent = [0] * len(chosen)
        for r in range(args.rounds):
            started = time.time()
            for i, (m, config, observer) in enumerate(zip(chosen, configs, observers)):
                a = observer.wait_for_round(timeout=300, min_seconds_left=5)
                base = observer.wait_for_model(a.base_model_round, timeout=120)
                for c, data in enumerate(shards):
                    model = make_model()
                    model.load_state_dict(to_state_dict(base.tensors))
                    trainer = trainers[i][c]
                    if trainer is None:
                        train_locally(model, data, 1, args.lr, 1000 * a.round + c, args.batch)
                    else:
                        trainer.train(model, *data)
                    update = state_dict_delta(model.state_dict(), base.tensors)
                    if m.filter is not None:
                        release = m.filter.apply(update)
                        update = release.update
                        if c == 0:  # every client's statement is the same: count one
                            ledgers[i] = ledgers[i].plus(release.statement)
                    value = encode_update(config, a.round, f"client-{c}", update)
                    producer.produce(config.topics.updates, value)
                producer.flush(30)
                sent[i] = a.round
            for i, (m, observer) in enumerate(zip(chosen, observers)):
                released = observer.wait_for_model(sent[i], timeout=args.round_seconds + 120)
                model = make_model()
                model.load_state_dict(to_state_dict(released.tensors))
                dp_sgd = max((t.ledger.epsilon(DELTA).epsilon for t in trainers[i] if t), default=0.0)
                holds, claimed = client_epsilon(m, ledgers[i], dp_sgd, dimension)
                rows.append({"dataset": args.dataset, "mechanism": m.name, "parameter": m.parameter,
                             "round": r + 1, "accuracy": accuracy(model, test),
                             "client_epsilon": holds, "client_epsilon_claimed": claimed,
                             "server_epsilon": released.privacy.epsilon})
            best = {m.name + " " + m.parameter: rows[-len(chosen) + i]["accuracy"] for i, m in enumerate(chosen)}
            print(f"round {r + 1}/{args.rounds} ({time.time() - started:.0f} s): " +
                  ", ".join(f"{k} {v:.3f}" for k, v in best.items()), flush=True)
    finally:
        for observer in observers:  # before the broker goes
            observer.close()
        job.terminate()
        try:
            job.wait(60)
        except subprocess.TimeoutExpired:
            job.kill()
        log.close()
    out = args.out / f"client-privacy-{args.dataset}.csv"
    with open(out, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    print(f"\n{'mechanism':<22} {'parameter':<14} {'accuracy':>9} {'client eps':>12} {'claimed':>12} {'server eps':>11}")
    for row in rows[-len(chosen):]:
        print(f"{row['mechanism']:<22} {row['parameter']:<14} {row['accuracy']:>9.3f} "
              f"{row['client_epsilon']:>12.4g} {row['client_epsilon_claimed']:>12.4g} {row['server_epsilon']:>11.4g}")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
