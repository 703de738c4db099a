"""What the job does at a secure round's deadlines (docs/secure-aggregation.md, "What the job
computes"), in pure Python, for the tests only: the Java job is the real one. The consistency
round as the job runs it (``SurvivorSignatures``: the statement, the signatures it accepts, the
``Consistency`` it publishes), the unmasked sum, a seeded randomness for sessions and a builder
of rosters from the AdvertiseKeys the job accepts."""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from privagg_client.secure import (
    ClientSession,
    Roster,
    RosterEntry,
    SignedSurvivors,
    UnmaskShares,
    group,
    shamir,
)
from privagg_client.secure.messages import AdvertiseKeys
from privagg_client.secure.primitives import (
    KEY_BYTES,
    add_mask,
    has_small_order,
    mask_public_key,
    survivor_statement,
    verify,
    pairwise_mask_key,
    roster_permutation,
    self_mask_commitment,
    self_mask_key,
)


class SeededRandomness:
    """A session's randomness from a seeded ``random.Random``: reproducible, and never secret."""

    def __init__(self, seed: int) -> None:
        self._random = random.Random(seed)

    def token_bytes(self, n: int) -> bytes:
        return self._random.randbytes(n)

    def randbelow(self, n: int) -> int:
        return self._random.randrange(n)


SMALL_ORDER_SIGNING_KEY = "signingPublicKey has small order; send a fresh Ed25519 key"
"""The job's reject text for an AdvertiseKeys whose signing key has small order (Java
``SecureMessageValidator``)."""


def advertise_problem(keys: AdvertiseKeys) -> str | None:
    """Why the job rejects ``keys``' signing key, as Java's ``SecureMessageValidator`` does (its
    checks of the signing key, in its order), or None when it takes it: a key that is not 32
    bytes, or one of small order, under which signatures nobody made verify."""
    signing = keys.signing_public_key
    if len(signing) != KEY_BYTES:
        return (
            f"signingPublicKey must have {KEY_BYTES} bytes (Ed25519), had {len(signing)}; a "
            "client from before the consistency round (SecureMessage v2) cannot take part: "
            "upgrade it"
        )
    if has_small_order(signing):
        return SMALL_ORDER_SIGNING_KEY
    return None


def make_roster(
    keys: Sequence[AdvertiseKeys], degree: int, threshold: int, context: bytes = b""
) -> Roster:
    """The roster of ``keys`` in order, on the graph the job would announce: the ring that
    ``context`` and the keys derive, or the complete graph (``degree == len(keys)``).

    Raises ValueError when the job would have rejected one of ``keys`` (:func:`advertise_problem`):
    it never puts such keys in a roster. (A test of a lying server alters the roster after.)"""
    for i, k in enumerate(keys):
        problem = advertise_problem(k)
        if problem is not None:
            raise ValueError(f"AdvertiseKeys {i} rejected: {problem}")
    entries = tuple(
        RosterEntry(
            k.encryption_public_key, k.mask_public_key, k.self_mask_commitment, k.signing_public_key
        )
        for k in keys
    )
    if degree == len(keys):
        permutation = list(range(len(keys)))
    else:
        triples = [(e.encryption_public_key, e.mask_public_key, e.self_mask_commitment)
                   for e in entries]
        permutation = roster_permutation(context, triples)
    return Roster(entries, degree, threshold, tuple(permutation))


def job_statement(
    context: bytes,
    roster: Roster,
    confirmed: Iterable[int],
    cuts: Iterable[tuple[int, int]],
    masked_input: Iterable[int],
) -> bytes:
    """The survivor statement as the job computes it at the masked-input deadline, from its own
    state: every roster entry's four keys as advertised (128 bytes), the graph, U2, the cuts and
    U3."""
    entries = [
        e.encryption_public_key + e.mask_public_key + e.self_mask_commitment + e.signing_public_key
        for e in roster.entries
    ]
    return survivor_statement(
        context, entries, roster.degree, roster.threshold, roster.permutation,
        confirmed, cuts, masked_input,
    )


class SurvivorSignatures:
    """The job's phase 5 (the consistency round): the statement of U2, the cuts and U3, the one
    signature per client of U3 that verifies under its advertised signing key, and the
    ``Consistency`` message of those, ascending by index. Only signers take part in phase 6."""

    def __init__(
        self,
        context: bytes,
        roster: Roster,
        confirmed: Iterable[int],
        cuts: Iterable[tuple[int, int]],
        masked_input: Iterable[int],
    ) -> None:
        self.roster = roster
        self.survivors = frozenset(masked_input)
        self.statement = job_statement(context, roster, confirmed, cuts, self.survivors)
        self.signatures: dict[int, bytes] = {}
        self.refused: list[str] = []

    def accept(self, index: int, signature: bytes) -> bool:
        """Keeps ``index``'s SurvivorSignature if it is its first, it is in U3 and the signature
        verifies on the statement; records why not otherwise."""
        if index not in self.survivors:
            self.refused.append(f"{index}: sent no masked input")
        elif index in self.signatures:
            self.refused.append(f"{index}: already signed")
        elif not verify(self.roster.entries[index].signing_public_key, self.statement, signature):
            self.refused.append(f"{index}: signature does not verify")
        else:
            self.signatures[index] = signature
            return True
        return False

    def consistency(self) -> tuple[SignedSurvivors, ...]:
        """The job's ``Consistency`` message: the accepted signatures, ascending by index."""
        return tuple(SignedSurvivors(i, s) for i, s in sorted(self.signatures.items()))

    def by_index(self) -> dict[int, bytes]:
        return dict(sorted(self.signatures.items()))


def sign_and_unmask(
    sessions: Mapping[int, ClientSession],
    context: bytes,
    roster: Roster,
    confirmed: Iterable[int],
    cuts: Iterable[tuple[int, int]],
    masked_input: Iterable[int],
) -> dict[int, UnmaskShares]:
    """Phases 5 and 6 of an honest job with honest clients: every session of U3 signs U2 and U3,
    the job keeps the signatures that verify, and every signer unmasks on them."""
    u2, u3 = sorted(confirmed), sorted(masked_input)
    job = SurvivorSignatures(context, roster, u2, cuts, u3)
    for u in u3:
        assert job.accept(u, sessions[u].sign_survivors(u2, u3)), job.refused
    return {u: sessions[u].unmask(job.by_index()) for u in job.signatures}


def _reconstruct(owner: int, shares: Mapping[int, bytes], threshold: int, what: str) -> bytes:
    """The 32-byte secret of ``owner`` (a scalar below l, little-endian) from the shares its
    holders revealed, by holder index."""
    if len(shares) < threshold:
        raise AssertionError(f"{what} of client {owner}: {len(shares)} shares, need {threshold}")
    points = {h + 1: shamir.share_from_bytes(s) for h, s in sorted(shares.items())[:threshold]}
    return group.scalar_bytes(shamir.reconstruct(points))


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
        assert self_mask_commitment(b_u) == roster.entries[u].self_mask_commitment
        add_mask(total, self_mask_key(context, b_u, u), -1)
    for w in sorted(shared - survivors):
        s_sk_w = _reconstruct(w, _revealed(unmask, w, "s"), t, "s_sk")
        assert mask_public_key(s_sk_w) == roster.entries[w].mask_public_key
        for u in roster.neighbourhood(w):
            if u in survivors and (min(u, w), max(u, w)) not in (cuts or set()):
                key = pairwise_mask_key(context, s_sk_w, roster.entries[u].mask_public_key, w, u)
                add_mask(total, key, -1 if u < w else +1)
    return total.view(np.int64)
