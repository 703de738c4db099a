"""What the job does at a secure round's deadline (docs/secure-aggregation.md, "What the job
computes"), in pure Python, for the tests only: the Java job is the real one. Plus a seeded
randomness for sessions and a builder of rosters."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence

import numpy as np

from privagg_client.secure import Roster, RosterEntry, UnmaskShares, shamir
from privagg_client.secure.messages import AdvertiseKeys
from privagg_client.secure.primitives import (
    add_mask,
    pairwise_mask_key,
    roster_permutation,
    self_mask_commitment,
    self_mask_key,
    x25519_public_key,
)


class SeededRandomness:
    """A session's randomness from a seeded ``random.Random``: reproducible, and never secret."""

    def __init__(self, seed: int) -> None:
        self._random = random.Random(seed)

    def token_bytes(self, n: int) -> bytes:
        return self._random.randbytes(n)

    def randbelow(self, n: int) -> int:
        return self._random.randrange(n)


def make_roster(
    keys: Sequence[AdvertiseKeys], degree: int, threshold: int, context: bytes = b""
) -> Roster:
    """The roster of ``keys`` in order, on the graph the job would announce: the ring that
    ``context`` and the keys derive, or the complete graph (``degree == len(keys)``)."""
    entries = tuple(
        RosterEntry(k.encryption_public_key, k.mask_public_key, k.self_mask_commitment)
        for k in keys
    )
    if degree == len(keys):
        permutation = list(range(len(keys)))
    else:
        triples = [(e.encryption_public_key, e.mask_public_key, e.self_mask_commitment)
                   for e in entries]
        permutation = roster_permutation(context, triples)
    return Roster(entries, degree, threshold, tuple(permutation))


def _reconstruct(owner: int, shares: Mapping[int, bytes], threshold: int, what: str) -> bytes:
    """The 32-byte secret of ``owner`` from the shares its holders revealed, by holder index."""
    if len(shares) < threshold:
        raise AssertionError(f"{what} of client {owner}: {len(shares)} shares, need {threshold}")
    points = {h + 1: shamir.share_from_bytes(s) for h, s in sorted(shares.items())[:threshold]}
    return shamir.reconstruct(points).to_bytes(32, "big")


def _revealed(unmask: Mapping[int, UnmaskShares], owner: int, kind: str) -> dict[int, bytes]:
    out = {}
    for holder, message in unmask.items():
        shares = message.self_mask_shares if kind == "b" else message.mask_key_shares
        out.update({holder: s.share for s in shares if s.index == owner})
    return out


def unmasked_sum(
    context: bytes,
    roster: Roster,
    shared: set[int],
    masked_inputs: Mapping[int, np.ndarray],
    unmask: Mapping[int, UnmaskShares],
    cuts: set[tuple[int, int]] | None = None,
) -> np.ndarray:
    """The sum of the survivors' quantized updates, as signed 64-bit integers: the masked inputs
    summed, minus every survivor's self-mask and, for each dropped client w of U2 (the confirmed)
    and each neighbour u of w in U3 whose pair with w is not in ``cuts``, ``sign(u, w) mask(pairwise
    key of u and w)``."""
    survivors = set(masked_inputs)
    total = np.zeros(len(next(iter(masked_inputs.values()))), dtype=np.uint64)
    for y in masked_inputs.values():
        np.add(total, y, out=total)
    t = roster.threshold
    for u in sorted(survivors):
        b_u = _reconstruct(u, _revealed(unmask, u, "b"), t, "b")
        assert self_mask_commitment(context, b_u) == roster.entries[u].self_mask_commitment
        add_mask(total, self_mask_key(context, b_u, u), -1)
    for w in sorted(shared - survivors):
        s_sk_w = _reconstruct(w, _revealed(unmask, w, "s"), t, "s_sk")
        assert x25519_public_key(s_sk_w) == roster.entries[w].mask_public_key
        for u in roster.neighbourhood(w):
            if u in survivors and (min(u, w), max(u, w)) not in (cuts or set()):
                key = pairwise_mask_key(context, s_sk_w, roster.entries[u].mask_public_key, w, u)
                add_mask(total, key, -1 if u < w else +1)
    return total.view(np.int64)
