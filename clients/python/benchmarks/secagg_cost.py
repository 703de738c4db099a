"""One Python client's CPU in a secure aggregation round (docs/secure-aggregation.md, "What it
costs"), against the same client's plaintext encode, printed as JSON.

A roster of ``--clients`` sessions on the job's Harary graph: the other clients only advertise
and share (phases 1 and 2), so that the measured client is routed real sealed shares; a
``--dropout-rate`` of them (never the measured one) drop out after phase 2, so its unmask reveals
mask-key shares too. The other survivors' signatures of its survivor statement (phase 5) are made
untimed with their keys; the measured client signs and, in its unmask, verifies them. Only the
measured client does the d-sized work. Times are the thread's CPU
time (``time.thread_time``), medians over ``--rounds`` rounds after ``--warmup-rounds``.

The graph is an input: ``--degree`` (neighbourhood size k, the node included) and ``--threshold``
default to what the job chooses for 100 clients at dropout and adversarial rates of 0.1, as
``privagg secagg-cost`` reports it; every session holds it to the threat model of
``--adversarial-client-rate`` and ``--dropout-rate``, as a client holds a roster to the job's.

    /usr/bin/python3 clients/python/benchmarks/secagg_cost.py --dimension 10000,1000000
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import random
import secrets
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable

import cryptography
import nacl
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from privagg_client.job import JobConfig  # noqa: E402
from privagg_client.secure import (  # noqa: E402
    SYSTEM_RANDOMNESS,
    ClientSession,
    Roster,
    RosterEntry,
    RoutedShare,
    ShareKeys,
    Shares,
    SurvivorSignature,
    quantize,
)
from privagg_client.secure.primitives import (  # noqa: E402
    roster_permutation,
    round_context,
    sign,
)
from privagg_client.secure.thresholds import ThreatModel  # noqa: E402
from privagg_client.secure_round import encode_secure_message  # noqa: E402
from privagg_client.updates import encode_update  # noqa: E402

JOB_ID = "secagg-cost"
CLIP_NORM = 1.0
MAX_GRID_STEPS = 1024
PHASES = (
    "advertise", "onRoster", "onShares", "quantize", "maskedInput", "sign", "unmask", "encode"
)


class _KeptDraws:
    """A CSPRNG that keeps what it drew: a session's second 32 bytes are its signing key (after
    its encryption key; its mask key and self-mask seed are scalars, drawn with randbelow), which
    the benchmark uses to sign for the clients it only simulates."""

    def __init__(self) -> None:
        self.draws: list[bytes] = []

    def token_bytes(self, n: int) -> bytes:
        out = secrets.token_bytes(n)
        self.draws.append(out)
        return out

    def randbelow(self, n: int) -> int:
        return secrets.randbelow(n)


def grid_step(d: int) -> float:
    """2^-e, e >= 20, so that d values of at most 1024 steps have norm at most C / 2 (as the
    Java ``SecAggCost``): on the grid, inside the clip norm, exact in float32."""
    e = 20
    while math.sqrt(d) * MAX_GRID_STEPS * 2.0**-e > CLIP_NORM / 2:
        e += 1
    return 2.0**-e


def timed(clock: dict[str, float], phase: str, work: Callable[[], Any]) -> Any:
    started = time.thread_time()
    result = work()
    clock[phase] = clock.get(phase, 0.0) + 1000 * (time.thread_time() - started)
    return result


def one_round(
    d: int,
    m: int,
    degree: int,
    threshold: int,
    dropped: int,
    round_number: int,
    threat: ThreatModel,
) -> dict[str, float]:
    """One round; returns the measured client's CPU milliseconds per phase, and its bytes. Every
    session holds the roster to ``threat``, as a client holds it to the job's."""
    session_id = secrets.token_bytes(16)
    me = random.randrange(m)
    client_id = f"client-{me:05d}"
    steps = np.random.default_rng(round_number).integers(-MAX_GRID_STEPS, MAX_GRID_STEPS + 1, d)
    values = (steps * grid_step(d)).astype(np.float32)
    clock: dict[str, float] = {}

    def message(body: Any) -> bytes:
        return timed(
            clock,
            "encode",
            lambda: encode_secure_message(JOB_ID, round_number, session_id, client_id, body),
        )

    # Phase 1: everyone advertises; the job's roster puts them on the Harary cycle their keys
    # derive.
    sessions: list[ClientSession] = []
    draws: list[_KeptDraws] = []
    for c in range(m):
        if c == me:
            session = timed(
                clock,
                "advertise",
                lambda: ClientSession(
                    JOB_ID, round_number, session_id, SYSTEM_RANDOMNESS, threat
                ),
            )
            timed(clock, "advertise", session.advertise)
            draws.append(_KeptDraws())
        else:
            draws.append(_KeptDraws())
            session = ClientSession(JOB_ID, round_number, session_id, draws[c], threat)
        sessions.append(session)
    client = sessions[me]
    encoded = [message(client.advertise())]
    keys = [s.advertise() for s in sessions]
    entries = tuple(
        RosterEntry(
            k.encryption_public_key, k.mask_public_key, k.self_mask_commitment, k.signing_public_key
        )
        for k in keys
    )
    # The ring the keys derive (the job's, and the one every client checks).
    context = round_context(JOB_ID, round_number, session_id)
    triples = [
        (e.encryption_public_key, e.mask_public_key, e.self_mask_commitment) for e in entries
    ]
    roster = Roster(entries, degree, threshold, tuple(roster_permutation(context, triples)))

    # Phase 2: the neighbours seal shares for the measured client (untimed), and it for them;
    # the job routes each with its dealer's Feldman commitments.
    neighbours = [v for v in roster.neighbourhood(me) if v != me]
    routed = []
    for c in neighbours:
        for share in sessions[c].on_roster(roster):
            if share.index == me:
                routed.append(RoutedShare(c, share.ciphertext, sessions[c].commitments))
    sealed = timed(clock, "onRoster", lambda: client.on_roster(roster))
    encoded.append(message(ShareKeys(sealed, client.commitments)))

    # A dropout rate of the others stop after their receipt: U2 is everyone, U3 the rest.
    gone = set(random.sample([c for c in range(m) if c != me], dropped))
    shared = tuple(range(m))
    survivors = tuple(c for c in range(m) if c not in gone)

    # Phases 3 to 6, as the client library runs them (quantize with a CSPRNG-seeded generator);
    # every share opens and checks against its dealer's commitments, so everyone is confirmed and
    # no pair is cut.
    timed(clock, "onShares", lambda: client.on_shares(Shares(me, tuple(routed))))
    if client.receipt():
        raise AssertionError(f"the client rejected shares: {client.rejected_shares}")
    client.on_confirmed(shared, [])
    x = timed(clock, "quantize", lambda: quantize(values, CLIP_NORM))
    exact = np.rint(values.astype(np.float64) * 2.0**36).astype(np.int64)
    if not np.array_equal(x, exact):
        raise AssertionError("values on the grid must quantize to their exact units")
    y = timed(clock, "maskedInput", lambda: client.masked_input(x))
    encoded.append(message(y))
    signature = timed(clock, "sign", lambda: client.sign_survivors(shared, survivors))
    encoded.append(message(SurvivorSignature(signature)))
    signatures = {
        c: signature if c == me else sign(draws[c].draws[1], client.statement) for c in survivors
    }
    revealed = timed(clock, "unmask", lambda: client.unmask(signatures))
    encoded.append(message(revealed))
    if len(revealed.mask_key_shares) != len(gone & set(neighbours)):
        raise AssertionError("the client must reveal a mask-key share for each dropped neighbour")

    job = JobConfig(JOB_ID, {"update": (d,)})
    plaintext = timed(
        clock,
        "plaintextEncode",
        lambda: encode_update(job, round_number, client_id, {"update": values}),
    )
    clock["secureTotal"] = sum(clock[p] for p in PHASES)
    clock["maskedInputBytes"] = len(encoded[2])
    clock["plaintextBytes"] = len(plaintext)
    return clock


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument(
        "--dimension", default="10000,1000000", help="model sizes d (default 10000,1000000)"
    )
    parser.add_argument("--clients", type=int, default=100, help="roster size m (default 100)")
    parser.add_argument(
        "--degree", type=int, default=33, help="neighbourhood size k with the node (default 33)"
    )
    parser.add_argument("--threshold", type=int, default=22, help="threshold t (default 22)")
    parser.add_argument(
        "--dropout-rate", type=float, default=0.1, help="share dropping after phase 2 (0.1)"
    )
    parser.add_argument(
        "--adversarial-client-rate",
        type=float,
        default=0.1,
        help="the threat model's adversarial client rate, with --dropout-rate as its dropout "
        "rate, which the graph must meet (0.1)",
    )
    parser.add_argument("--rounds", type=int, default=3, help="measured rounds per d (3)")
    parser.add_argument("--warmup-rounds", type=int, default=1, help="untimed rounds first (1)")
    args = parser.parse_args()

    dropped = int(math.floor(args.dropout_rate * args.clients + 1e-9))
    threat = ThreatModel(args.adversarial_client_rate, args.dropout_rate)
    results = []
    for d in (int(v) for v in args.dimension.split(",")):
        rounds = []
        for r in range(1, args.warmup_rounds + args.rounds + 1):
            started = time.monotonic()
            clock = one_round(
                d, args.clients, args.degree, args.threshold, dropped, r, threat
            )
            warmup = r <= args.warmup_rounds
            print(
                f"d {d}, {'warm-up ' if warmup else ''}round {r}: client "
                f"{clock['secureTotal']:.1f} ms CPU ({time.monotonic() - started:.1f} s with "
                "the roster)",
                file=sys.stderr,
            )
            if not warmup:
                rounds.append(clock)
        results.append(
            {
                "dimension": d,
                "clients": args.clients,
                "neighbourhoodSize": args.degree,
                "threshold": args.threshold,
                "dropped": dropped,
                "rounds": args.rounds,
                "maskedInputBytes": rounds[0]["maskedInputBytes"],
                "plaintextBytes": rounds[0]["plaintextBytes"],
                "cpuMillis": {
                    k: round(statistics.median(c[k] for c in rounds), 3)
                    for k in ("plaintextEncode", *PHASES, "secureTotal")
                },
            }
        )
    print(
        json.dumps(
            {
                "python": platform.python_version(),
                "numpy": np.__version__,
                "cryptography": cryptography.__version__,
                "pynacl": nacl.__version__,
                "results": results,
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
