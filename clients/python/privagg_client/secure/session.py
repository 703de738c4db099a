"""One client's side of one secure aggregation round (SecAgg+: Bonawitz et al., CCS 2017, the
phases of section 4 with a receipt for the routed shares and the consistency round's signed
survivor list; Bell et al., CCS 2020, on a sparse Harary graph), as
docs/secure-aggregation.md specifies it byte for byte. Pure: it reads and returns messages and
never touches Kafka."""

from __future__ import annotations

import enum
import os
import secrets
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Protocol

import numpy as np
from cryptography.exceptions import InvalidTag

from ..errors import SecureProtocolError, SessionStateError, UnmaskRefused
from . import group, shamir
from .messages import (
    AdvertiseKeys,
    EncryptedShare,
    RevealedShare,
    Roster,
    Shares,
    UnmaskShares,
)
from .thresholds import ThreatModel, check_graph, rejection_limit, signature_threshold
from .primitives import (
    KEY_BYTES,
    NONCE_BYTES,
    TAG_BYTES,
    add_mask,
    decrypt_shares,
    encrypt_shares,
    pairwise_mask_key,
    roster_permutation,
    round_context,
    self_mask_commitment,
    self_mask_key,
    share_encryption_key,
    sign,
    signing_public_key,
    survivor_statement,
    verify,
    mask_public_key,
    x25519_public_key,
)

if TYPE_CHECKING:
    import numpy.typing as npt

SEALED_SHARES_BYTES = NONCE_BYTES + 2 * shamir.SHARE_BYTES + TAG_BYTES
"""A neighbour's sealed pair of shares: nonce, 64 bytes of ciphertext, tag (92 bytes)."""


class Randomness(Protocol):
    """Where a session draws its secrets: a CSPRNG (:data:`SYSTEM_RANDOMNESS`) unless a test
    gives a seeded one."""

    def token_bytes(self, n: int) -> bytes:
        """``n`` uniformly random bytes."""

    def randbelow(self, n: int) -> int:
        """A uniformly random integer in ``[0, n)``."""


class _SystemRandomness:
    def token_bytes(self, n: int) -> bytes:
        return os.urandom(n)

    def randbelow(self, n: int) -> int:
        return secrets.randbelow(n)


SYSTEM_RANDOMNESS: Randomness = _SystemRandomness()
"""The operating system's CSPRNG."""


class _Phase(enum.IntEnum):
    ADVERTISED = 1
    SHARED = 2
    RECEIVED_SHARES = 3
    CONFIRMED = 4
    MASKED = 5
    SIGNED = 6


class ClientSession:
    """A client in one protocol instance (``jobId``, round, session).

    Creating it draws the X25519 encryption key, the mask key ``s_sk`` (a scalar in [1, l)), the
    self-mask seed ``b`` (a scalar in [1, l)) and the Ed25519 signing key, in that order; then,
    in order: :meth:`advertise` (phase 1), :meth:`on_roster` and :attr:`commitments` (phase 2),
    :meth:`on_shares` and :meth:`receipt` (phase 3), :meth:`on_confirmed` and
    :meth:`masked_input` (phase 4), :meth:`sign_survivors` (phase 5, the consistency round:
    repeatable with the same survivors), :meth:`unmask` (phase 6, repeatable). A session's keys,
    seeds and masked input are never used in another session.

    Guards for phases 5 and 6 (Bonawitz et al., CCS 2017, Section 4; Bell et al., CCS 2020): it
    signs a survivor list only after its masked input, only if it is in U3, U3 is within U2, U2
    is the ``Confirmed`` it masked by and at least t of its neighbourhood and of its partners
    (itself included) are in U3; it signs one list only, and reveals shares only when at least
    T = (n + A) // 2 + 1 clients of that U3 signed the same statement. Each honest client signs
    once, so no two statements on one roster reach T; and every share is sealed under the digest
    of its dealer's roster (:meth:`Roster.digest`), so clients a lying server shows different
    rosters (of other sizes, so other T) hold nothing of each other. So every client that reveals
    a share of a client saw that client's roster, cuts and survivors, and none reveals both the
    self-mask seed and the mask key of one client, whatever lists a lying server shows whom.

    The threat model is required (:meth:`unchecked_for_tests` builds a session without one, for
    tests of arbitrary graphs only).
    """

    def __init__(
        self,
        job_id: str,
        round_number: int,
        session: bytes,
        randomness: Randomness,
        threat: ThreatModel,
    ) -> None:
        """``randomness``: where it draws its secrets, :data:`SYSTEM_RANDOMNESS` outside tests.
        ``threat``: the job's rates and adversary (the job spec's ``aggregation``:
        ``JobConfig.aggregation.threat``, as :mod:`privagg_client.secure_round` passes it); a
        roster's (k, t) is held to them (:func:`check_graph`), the cuts of a ``Confirmed`` to its
        rejection limit and the survivors' signatures to its threshold T. Required, as Java's
        ``ClientSession.start`` requires it: raises TypeError for ``None`` or anything but a
        :class:`ThreatModel`."""
        if not isinstance(threat, ThreatModel):
            raise TypeError(
                f"threat must be the job's ThreatModel (JobConfig.aggregation.threat), was "
                f"{threat!r}: it is what a Roster is held to"
            )
        self._start(job_id, round_number, session, randomness, threat)

    @classmethod
    def unchecked_for_tests(
        cls,
        job_id: str,
        round_number: int,
        session: bytes,
        randomness: Randomness = SYSTEM_RANDOMNESS,
    ) -> ClientSession:
        """FOR TESTS OF ARBITRARY GRAPHS ONLY (Java's ``ClientSession.startUnchecked``): a
        session without a threat model, which takes whatever (k, t) a ``Roster`` states, applies
        no rejection limit to the cuts of a ``Confirmed`` and needs n // 2 + 1 signatures. A
        lying server can read such a client's update (a roster with t = 1, say); never use it
        against a real job."""
        unchecked = cls.__new__(cls)
        unchecked._start(job_id, round_number, session, randomness, None)
        return unchecked

    def _start(
        self,
        job_id: str,
        round_number: int,
        session: bytes,
        randomness: Randomness,
        threat: ThreatModel | None,
    ) -> None:
        self.context = round_context(job_id, round_number, session)
        """``ctx``: the bytes every key and mask of this session is bound to."""
        self._threat = threat
        self._randomness = randomness
        self._c_sk = randomness.token_bytes(KEY_BYTES)
        self._s_sk = group.scalar_bytes(1 + randomness.randbelow(group.ORDER - 1))
        self._b = group.scalar_bytes(1 + randomness.randbelow(group.ORDER - 1))
        self._g_sk = randomness.token_bytes(KEY_BYTES)
        self._keys = AdvertiseKeys(
            x25519_public_key(self._c_sk),
            mask_public_key(self._s_sk),
            self_mask_commitment(self._b),
            signing_public_key(self._g_sk),
        )
        self._phase = _Phase.ADVERTISED
        self._roster: Roster | None = None
        self._roster_digest = b""
        self._index = -1
        self._neighbours: tuple[int, ...] = ()
        self._own_shares = (0, 0)
        self._held: dict[int, tuple[int, int]] = {}
        self._routed: tuple[int, ...] = ()
        self._undecryptable: tuple[int, ...] = ()
        self._confirmed: frozenset[int] = frozenset()
        self._masked_with: tuple[int, ...] = ()
        self._rejected: dict[int, str] = {}
        self._confirmed_list: tuple[int, ...] = ()
        self._cuts: tuple[tuple[int, int], ...] = ()
        self._signed: frozenset[int] = frozenset()
        self._statement = b""
        self._signature = b""
        self._revealed: UnmaskShares | None = None

    # -- phase 1 ----------------------------------------------------------------------------

    def advertise(self) -> AdvertiseKeys:
        """Phase 1: ``c_pk``, ``s_pk``, the self-mask commitment and the signing key."""
        return self._keys

    # -- phase 2 ----------------------------------------------------------------------------

    @property
    def index(self) -> int:
        """This client's roster index (after :meth:`on_roster`)."""
        self._require(_Phase.SHARED, "its roster index is known")
        return self._index

    @property
    def neighbours(self) -> tuple[int, ...]:
        """The k - 1 other nodes of this client's neighbourhood, in index order."""
        self._require(_Phase.SHARED, "its neighbours are known")
        return self._neighbours

    def on_roster(self, roster: Roster) -> tuple[EncryptedShare, ...]:
        """Phase 2: finds this client in ``roster`` by its encryption public key and returns the
        sealed shares of ``s_sk`` and ``b`` for each of its k - 1 other neighbours, each under the
        roster's digest (:meth:`Roster.digest`, in the associated data): it opens only for a
        neighbour shown this same roster, and this client opens only shares dealt on it.

        Raises :class:`SecureProtocolError` when the roster does not list this client exactly
        once with its own four keys (signing key included), its (k, t) does not meet the job's
        threat model, its ring is not the one its keys derive, a neighbour's encryption public
        key is unusable (of low order), or a neighbour's mask public key or self-mask commitment
        is no point of edwards25519's prime-order subgroup."""
        if self._phase != _Phase.ADVERTISED:
            raise SessionStateError("on_roster was already called in this session")
        index = self._find_self(roster)
        if self._threat is not None:
            check_graph(len(roster.entries), roster.degree, roster.threshold, self._threat)
        self._check_ring(roster)
        neighbours = tuple(v for v in roster.neighbourhood(index) if v != index)
        keys = {v: self._share_key(roster, index, v) for v in neighbours}
        self._check_mask_keys(roster, neighbours)
        digest = roster.digest(self.context)
        xs = [index + 1, *(v + 1 for v in neighbours)]
        coefficients = [
            shamir.random_coefficients(roster.threshold, self._randomness.randbelow)
            for _ in range(2)
        ]
        s_shares = shamir.split(group.scalar(self._s_sk), coefficients[0], xs)
        b_shares = shamir.split(group.scalar(self._b), coefficients[1], xs)
        self._commitments = group.commitments(coefficients[0]) + group.commitments(
            coefficients[1]
        )
        sealed = tuple(
            EncryptedShare(
                v,
                encrypt_shares(
                    keys[v],
                    self.context,
                    index,
                    v,
                    digest,
                    shamir.share_to_bytes(s_shares[v + 1]) + shamir.share_to_bytes(b_shares[v + 1]),
                    self._randomness.token_bytes(NONCE_BYTES),
                ),
            )
            for v in neighbours
        )
        self._roster, self._index, self._neighbours = roster, index, neighbours
        self._roster_digest = digest
        self._own_shares = (s_shares[index + 1], b_shares[index + 1])
        self._phase = _Phase.SHARED
        return sealed

    def _check_ring(self, roster: Roster) -> None:
        """A sparse roster's ring must be the one its keys derive: a server that chose it could
        seat colluders around this client. The complete graph is the same whatever it says."""
        if roster.degree == len(roster.entries):
            return
        entries = [
            (e.encryption_public_key, e.mask_public_key, e.self_mask_commitment)
            for e in roster.entries
        ]
        if list(roster.permutation) != roster_permutation(self.context, entries):
            raise SecureProtocolError(
                "the roster's permutation is not the one its keys derive (roster_permutation); "
                "a server that picks the graph could surround this client with colluders"
            )

    def _find_self(self, roster: Roster) -> int:
        mine = [
            i
            for i, e in enumerate(roster.entries)
            if e.encryption_public_key == self._keys.encryption_public_key
        ]
        if len(mine) != 1:
            raise SecureProtocolError(
                f"the roster lists this client's encryption public key {len(mine)} times, "
                "it must list it once"
            )
        entry = roster.entries[mine[0]]
        # The signing key too: a server that listed one of its own could sign survivor
        # statements in this client's name.
        if (entry.mask_public_key, entry.self_mask_commitment, entry.signing_public_key) != (
            self._keys.mask_public_key,
            self._keys.self_mask_commitment,
            self._keys.signing_public_key,
        ):
            raise SecureProtocolError(
                f"roster entry {mine[0]} has this client's encryption key but other keys (its "
                "mask public key, self-mask commitment and signing key must be this client's)"
            )
        return mine[0]

    def _share_key(self, roster: Roster, u: int, v: int) -> bytes:
        try:
            return share_encryption_key(
                self.context, self._c_sk, roster.entries[v].encryption_public_key, u, v
            )
        except ValueError as e:
            raise SecureProtocolError(
                f"roster entry {v}: its encryption public key is unusable ({e})"
            ) from None

    def _check_mask_keys(self, roster: Roster, neighbours: Iterable[int]) -> None:
        for v in neighbours:
            entry = roster.entries[v]
            for name, point in (
                ("mask public key", entry.mask_public_key),
                ("self-mask commitment", entry.self_mask_commitment),
            ):
                if not group.is_valid(point):
                    raise SecureProtocolError(
                        f"roster entry {v}: its {name} is no point of edwards25519's prime-order"
                        " subgroup"
                    )

    @property
    def commitments(self) -> bytes:
        """Phase 2's public part: the Feldman commitments to coefficients 1 .. t-1 of the mask
        key's sharing polynomial, then of the self-mask seed's (after :meth:`on_roster`)."""
        self._require(_Phase.SHARED, "it shared")
        return self._commitments

    # -- phase 3 ----------------------------------------------------------------------------

    @property
    def masked_with(self) -> tuple[int, ...]:
        """The neighbours this client's masked input carries pairwise masks with: the confirmed
        ones whose shares were routed here and whose pair with it is not cut (after
        :meth:`on_confirmed`)."""
        self._require(_Phase.CONFIRMED, "its partners are known")
        return self._masked_with

    @property
    def rejected_shares(self) -> Mapping[int, str]:
        """Routed shares this client could not use, by sender, with the reason."""
        return dict(self._rejected)

    def on_shares(self, shares: Shares) -> None:
        """Phase 3: opens the shares the job routed to this client and checks each against its
        sender's Feldman commitments (:attr:`RoutedShare.commitments`, with the sender's mask
        public key and self-mask commitment as the constant terms). Shares that are not from a
        neighbour, repeated, do not decrypt (altered, or dealt on another roster: not under this
        client's roster digest) or are not on the committed polynomials are recorded in
        :attr:`rejected_shares`, never raised; the neighbours among them whose share does not
        open or check are this client's :meth:`receipt`."""
        if self._phase != _Phase.SHARED:
            raise SessionStateError(
                "on_shares needs on_roster first, and is called once per session"
            )
        if shares.recipient != self._index:
            raise SecureProtocolError(
                f"shares addressed to client {shares.recipient} were given to client {self._index}"
            )
        senders: list[int] = []
        undecryptable: list[int] = []
        for routed in shares.shares:
            v = routed.sender
            if v not in self._neighbours:
                self._rejected[v] = f"client {v} is not a neighbour of client {self._index}"
            elif v in senders:
                self._rejected[v] = f"client {v} sent shares twice; the first were kept"
            else:
                senders.append(v)
                if not self._open(v, routed.ciphertext, routed.commitments):
                    undecryptable.append(v)
        self._routed = tuple(sorted(senders))
        self._undecryptable = tuple(sorted(undecryptable))
        self._phase = _Phase.RECEIVED_SHARES

    def receipt(self) -> tuple[int, ...]:
        """Phase 3: the neighbours whose routed share did not open here or was off its sender's
        commitments, ascending; the job removes each or cuts its pair with this client, so no
        mask depends on a share it lacks."""
        self._require(_Phase.RECEIVED_SHARES, "its receipt is known")
        return self._undecryptable

    # -- phase 4 ----------------------------------------------------------------------------

    def on_confirmed(self, confirmed: Iterable[int], cuts: Iterable[tuple[int, int]]) -> None:
        """Phase 4 starts: who the job confirmed from every client's receipt (U2 from now on)
        and the pairs it cut; fixes :attr:`masked_with`.

        Raises :class:`SecureProtocolError` when this client was not confirmed (it sends no
        masked input), when the job confirms a neighbour whose shares were not routed here, or
        one whose share did not open here without cutting their pair, or cuts more of its pairs
        than r colluders could account for (a lying server that cuts a client down to few
        partners would leave its input under few masks)."""
        if self._phase != _Phase.RECEIVED_SHARES:
            raise SessionStateError(
                "on_confirmed needs on_shares first, and is called once per session"
            )
        assert self._roster is not None
        n = len(self._roster.entries)
        members = list(confirmed)
        if len(set(members)) != len(members) or any(not 0 <= i < n for i in members):
            raise SecureProtocolError(
                f"the confirmed clients must be distinct roster indices in [0, {n}), were "
                f"{members}"
            )
        pairs: set[tuple[int, int]] = set()
        for pair in cuts:
            a, b = pair
            if a == b or not (0 <= a < n and 0 <= b < n):
                raise SecureProtocolError(
                    f"a cut must be two distinct roster indices in [0, {n}), was {pair}"
                )
            if (min(a, b), max(a, b)) in pairs:
                raise SecureProtocolError(f"the cuts repeat the pair {pair}")
            pairs.add((min(a, b), max(a, b)))
        u2 = frozenset(members)
        if self._index not in u2:
            raise SecureProtocolError(
                f"this client ({self._index}) was not confirmed (too few partners, or its shares "
                "or receipt were refused); no masked input is sent"
            )
        partners: list[int] = []
        cut_pairs = 0
        for w in self._neighbours:
            if w not in u2:
                continue
            if w not in self._routed:
                raise SecureProtocolError(
                    f"the job confirms neighbour {w}, whose shares were not routed here"
                )
            cut = (min(w, self._index), max(w, self._index)) in pairs
            if w in self._undecryptable and not cut:
                raise SecureProtocolError(
                    f"the job confirms neighbour {w}, whose share did not open here, without "
                    "cutting the pair"
                )
            if not cut:
                partners.append(w)
            else:
                cut_pairs += 1
        # Every cut pair of an honest client holds a misbehaving client (junk it sent, or a false
        # complaint): a colluder, r at most, or the one client neighbouring worlds differ by. Its
        # own rejections count too, since the job routes the shares and could turn an honest
        # neighbour's into junk.
        if self._threat is not None:
            r = rejection_limit(n, self._roster.degree, self._threat)
            if cut_pairs > r + 1:
                raise SecureProtocolError(
                    f"the job cuts {cut_pairs} of this client's pairs, more than the {r + 1} "
                    f"misbehaving clients its neighbourhood may hold (r = {r} colluders and one "
                    "client more); no masked input is sent"
                )
        self._confirmed = u2
        self._confirmed_list = tuple(sorted(u2))
        self._cuts = tuple(sorted(pairs))
        self._masked_with = tuple(partners)
        self._phase = _Phase.CONFIRMED

    def _open(self, sender: int, sealed: bytes, commitments: bytes) -> bool:
        """Keeps ``sender``'s shares if they open and are on the polynomials ``commitments``
        state; False (and the reason recorded) if not."""
        assert self._roster is not None
        if len(sealed) != SEALED_SHARES_BYTES:
            self._rejected[sender] = (
                f"sealed shares are {SEALED_SHARES_BYTES} bytes, were {len(sealed)}"
            )
            return False
        key = self._share_key(self._roster, self._index, sender)
        try:
            plaintext = decrypt_shares(
                key, self.context, sender, self._index, self._roster_digest, sealed
            )
            s_share = shamir.share_from_bytes(plaintext[: shamir.SHARE_BYTES])
            b_share = shamir.share_from_bytes(plaintext[shamir.SHARE_BYTES :])
        except InvalidTag:
            self._rejected[sender] = (
                "the shares do not decrypt (altered, or not sealed for this pair and the roster "
                "this client was shown)"
            )
            return False
        except ValueError as e:
            self._rejected[sender] = f"the shares are malformed: {e}"
            return False
        entry = self._roster.entries[sender]
        t = self._roster.threshold
        half = group.commitment_bytes(t)
        x = self._index + 1
        if len(commitments) != 2 * half:
            self._rejected[sender] = (
                f"the sender's commitments are {len(commitments)} bytes, not the {2 * half} of"
                f" t = {t}"
            )
            return False
        for name, constant, committed, value in (
            ("mask key", entry.mask_public_key, commitments[:half], s_share),
            ("self-mask seed", entry.self_mask_commitment, commitments[half:], b_share),
        ):
            if not group.verifies(constant, committed, t, x, shamir.share_to_bytes(value)):
                self._rejected[sender] = (
                    f"the share of the sender's {name} is not on the polynomial its commitments"
                    " state"
                )
                return False
        self._held[sender] = (s_share, b_share)
        return True

    def masked_input(
        self, x: npt.NDArray[np.int64] | npt.NDArray[np.uint64]
    ) -> npt.NDArray[np.uint64]:
        """Phase 4, once per session: ``y = x + mask(self-mask key) + sum over`` :attr:`masked_with`
        ``v of sign(u, v) mask(pairwise mask key of u and v)``, modulo 2^64. ``x`` is the
        quantized update (signed 64-bit integers or their words)."""
        if self._phase >= _Phase.MASKED:
            raise SessionStateError("a session sends one masked input, and this one already did")
        self._require(_Phase.CONFIRMED, "it masks its input")
        assert self._roster is not None
        if len(self._masked_with) + 1 < self._roster.threshold:
            # Bonawitz et al.'s |U2| >= t: with fewer partners the self-mask would be nearly all
            # that hides the input, and the job could hold back the other shares on purpose.
            raise SecureProtocolError(
                f"only {len(self._masked_with)} confirmed partners, fewer than the threshold "
                f"{self._roster.threshold} - 1; no masked input is sent"
            )
        values = np.asarray(x)
        if values.dtype not in (np.dtype(np.int64), np.dtype(np.uint64)):
            raise TypeError(f"a quantized update is int64 or uint64, was {values.dtype}")
        y = np.array(values.ravel(), dtype=values.dtype).view(np.uint64)  # a copy
        u = self._index
        add_mask(y, self_mask_key(self.context, self._b, u), +1)
        for v in self._masked_with:
            s_pk_v = self._roster.entries[v].mask_public_key
            key = pairwise_mask_key(self.context, self._s_sk, s_pk_v, u, v)
            add_mask(y, key, +1 if u < v else -1)
        self._phase = _Phase.MASKED
        return y

    # -- phase 5 ----------------------------------------------------------------------------

    @property
    def statement(self) -> bytes:
        """The 32-byte survivor statement this client signed (after :meth:`sign_survivors`)."""
        self._require(_Phase.SIGNED, "its survivor statement is known")
        return self._statement

    def sign_survivors(self, shared: Iterable[int], masked_input: Iterable[int]) -> bytes:
        """Phase 5, the consistency round: checks the survivor list the job announced (``shared``,
        U2: the confirmed clients; ``masked_input``, U3: who sent a masked input) and returns the
        64-byte Ed25519 signature of the survivor statement (:func:`survivor_statement` of the
        roster, k, t and permutation of its ``Roster``, U2 and the cuts of its ``Confirmed``,
        and U3). Once per session: the same U3 again (in any order) gives the same signature.

        Raises :class:`UnmaskRefused` when this client sent no masked input, an index is outside
        the roster or repeats, U2 is not exactly the ``Confirmed`` it masked by, it is not in U3,
        U3 is not within U2, fewer than t of its neighbourhood or of its partners (itself
        included, each) are in U3, or it already signed another U3 (it signs one list per
        session, so no two lists both reach the signatures :meth:`unmask` needs)."""
        if self._phase < _Phase.MASKED:
            raise UnmaskRefused("this client sent no masked input in this session")
        assert self._roster is not None
        u2 = self._members("shared (U2)", shared)
        u3 = self._members("maskedInput (U3)", masked_input)
        self._check_survivors(u2, u3)
        if self._phase == _Phase.SIGNED:
            if u3 != self._signed:
                raise UnmaskRefused(
                    f"this client already signed the survivor list {sorted(self._signed)}; it "
                    f"signs one list per session, not also {sorted(u3)}"
                )
            return self._signature
        roster = self._roster
        self._statement = survivor_statement(
            self.context,
            [e.statement_bytes() for e in roster.entries],
            roster.degree,
            roster.threshold,
            roster.permutation,
            self._confirmed_list,
            self._cuts,
            sorted(u3),
        )
        self._signature = sign(self._g_sk, self._statement)
        self._signed = frozenset(u3)
        self._phase = _Phase.SIGNED
        return self._signature

    def _members(self, name: str, indices: Iterable[int]) -> frozenset[int]:
        assert self._roster is not None
        n = len(self._roster.entries)
        members = list(indices)
        outside = sorted(i for i in members if not 0 <= i < n)
        if outside:
            raise UnmaskRefused(f"{name}: survivors {outside} are not roster indices (0..{n - 1})")
        if len(set(members)) != len(members):
            raise UnmaskRefused(f"{name} repeats an index: {members}")
        return frozenset(members)

    def _check_survivors(self, u2: frozenset[int], u3: frozenset[int]) -> None:
        assert self._roster is not None
        if u2 != self._confirmed:
            extra, missing = sorted(u2 - self._confirmed), sorted(self._confirmed - u2)
            raise UnmaskRefused(
                "the survivors' confirmed clients (U2) are not the round's Confirmed, which this "
                f"client masked by: U2 includes {extra} that it did not confirm and omits "
                f"{missing} that it did"
            )
        if self._index not in u3:
            raise UnmaskRefused(f"this client ({self._index}) is not among the survivors")
        if not u3 <= u2:
            raise UnmaskRefused(
                f"clients {sorted(u3 - u2)} sent a masked input but are not among those who "
                "shared keys"
            )
        alive = sum(1 for v in self._roster.neighbourhood(self._index) if v in u3)
        if alive < self._roster.threshold:
            raise UnmaskRefused(
                f"only {alive} of this client's neighbourhood of {self._roster.degree} sent a "
                f"masked input, fewer than the threshold {self._roster.threshold}"
            )
        # Only partners' masks hide its input: a neighbour cut from it counts for nothing here,
        # or one Confirmed and one survivor list could strip its masks.
        masked = 1 + sum(1 for v in self._masked_with if v in u3)
        if masked < self._roster.threshold:
            raise UnmaskRefused(
                f"only {masked} of this client's partners (itself included) sent a masked "
                f"input, fewer than the threshold {self._roster.threshold}"
            )

    # -- phase 6 ----------------------------------------------------------------------------

    @property
    def signature_threshold(self) -> int:
        """T: the survivors' signatures of its statement :meth:`unmask` needs, (n + A) // 2 + 1
        (1 against a curious server; n // 2 + 1 for a session of :meth:`unchecked_for_tests`)."""
        self._require(_Phase.SHARED, "its signature threshold is known")
        assert self._roster is not None
        return signature_threshold(len(self._roster.entries), self._threat)

    def valid_signers(self, signatures: Mapping[int, bytes]) -> tuple[int, ...]:
        """The indices among ``signatures`` (the job's ``Consistency``, by signer) that count:
        in the U3 this client signed, and whose signature verifies under their roster entry's
        signing key on this client's statement. Others (outside U3 or the roster, malformed,
        forged, or under a signing key that is no 32-byte key) are left out, never raised."""
        self._require(_Phase.SIGNED, "it counts signatures")
        assert self._roster is not None
        n = len(self._roster.entries)
        valid = []
        for signer, signature in signatures.items():
            if (
                isinstance(signer, int)
                and 0 <= signer < n
                and signer in self._signed
                and verify(
                    self._roster.entries[signer].signing_public_key, self._statement, signature
                )
            ):
                valid.append(signer)
        return tuple(sorted(valid))

    def unmask(self, signatures: Mapping[int, bytes]) -> UnmaskShares:
        """Phase 6: once at least :attr:`signature_threshold` clients of the U3 it signed have
        signed the same statement (``signatures``: the job's ``Consistency`` message, signature by
        signer's roster index; see :meth:`valid_signers`), for each client w whose share this
        client holds (itself and the neighbours whose shares opened) the share of ``b_w`` if w is
        in U3, else the share of ``s_sk_w`` if w is in U2.

        Raises :class:`UnmaskRefused` when it signed no survivor list in this session, or fewer
        than T signed its statement: another list may have been shown to others. A repeated
        call returns the same shares."""
        if self._phase != _Phase.SIGNED:
            raise UnmaskRefused("this client signed no survivor list in this session")
        assert self._roster is not None
        valid = len(self.valid_signers(signatures))
        needed = self.signature_threshold
        if valid < needed:
            raise UnmaskRefused(
                f"only {valid} survivors signed the survivor list it signed, fewer than "
                f"{needed} ((n + A) / 2 + 1): another list may have been shown to others, so it "
                "reveals nothing"
            )
        if self._revealed is not None:
            return self._revealed
        u2, u3 = self._confirmed, self._signed
        held = {self._index: self._own_shares, **self._held}
        self._revealed = UnmaskShares(
            self_mask_shares=tuple(
                RevealedShare(w, shamir.share_to_bytes(held[w][1])) for w in sorted(held) if w in u3
            ),
            mask_key_shares=tuple(
                RevealedShare(w, shamir.share_to_bytes(held[w][0]))
                for w in sorted(held)
                if w in u2 and w not in u3
            ),
        )
        return self._revealed

    def _require(self, phase: _Phase, what: str) -> None:
        if self._phase < phase:
            raise SessionStateError(
                f"the session is in phase {int(self._phase)}; it needs phase {int(phase)} "
                f"before {what}"
            )
