"""The contents of secure aggregation's messages (``SecureMessage`` bodies a client writes,
``SecureRound`` bodies the job writes), as plain values; :mod:`privagg_client.secure_round`
converts them to and from Avro."""

from __future__ import annotations

from .distributed import NoisePlan

from dataclasses import dataclass

from ..errors import SecureProtocolError
from .primitives import KEY_BYTES, roster_digest


@dataclass(frozen=True)
class AdvertiseKeys:
    """Phase 1: a client's X25519 public key for the shares sent to it, its mask public key
    ``s_sk B`` and self-mask commitment ``b B`` (points of edwards25519's prime-order subgroup,
    RFC 8032 encodings) and the Ed25519 public key it signs the survivor list with in phase 5
    (empty: none, as before v3)."""

    encryption_public_key: bytes
    mask_public_key: bytes
    self_mask_commitment: bytes
    signing_public_key: bytes = b""


@dataclass(frozen=True)
class EncryptedShare:
    """Phase 2: the sealed pair of shares for the neighbour at roster index ``index``."""

    index: int
    ciphertext: bytes


@dataclass(frozen=True)
class ShareKeys:
    """Phase 2: the sealed shares for each neighbour, and the Feldman commitments to both
    sharing polynomials (:attr:`ClientSession.commitments`)."""

    shares: tuple[EncryptedShare, ...]
    commitments: bytes


@dataclass(frozen=True)
class RevealedShare:
    """Phase 4: this client's share of the secret of the client at roster index ``index``."""

    index: int
    share: bytes


@dataclass(frozen=True)
class UnmaskShares:
    """Phase 6: shares of the survivors' self-mask seeds and of the dropped clients' mask keys."""

    self_mask_shares: tuple[RevealedShare, ...]
    mask_key_shares: tuple[RevealedShare, ...]


@dataclass(frozen=True)
class SurvivorSignature:
    """Phase 5, the consistency round: this client's 64-byte Ed25519 signature of the survivor
    statement, under the signing key it advertised."""

    signature: bytes


@dataclass(frozen=True)
class ShareReceipt:
    """Phase 3: the neighbours whose routed share did not decrypt for this client, or was not on
    the polynomial the sender's Feldman commitments state, ascending."""

    rejected: tuple[int, ...]


@dataclass(frozen=True)
class Opened:
    """Phase 0: the round's phase deadlines (epoch milliseconds, broker time) and clipNorm."""

    advertise_deadline_millis: int
    share_deadline_millis: int
    confirm_deadline_millis: int
    masked_input_deadline_millis: int
    consistency_deadline_millis: int
    unmask_deadline_millis: int
    clip_norm: float
    distributed_noise: NoisePlan | None = None


@dataclass(frozen=True)
class RosterEntry:
    """One admitted client's advertised keys. A signing key of another length than 32 bytes
    (empty in a roster of before v3) is no key: signatures under it never count, and the survivor
    statement carries 32 zero bytes in its place, as Java's client does."""

    encryption_public_key: bytes
    mask_public_key: bytes
    self_mask_commitment: bytes
    signing_public_key: bytes = b""

    def statement_bytes(self) -> bytes:
        """The entry as the survivor statement holds it: the four keys, 128 bytes."""
        signing = self.signing_public_key
        if len(signing) != KEY_BYTES:
            signing = bytes(KEY_BYTES)
        return (
            self.encryption_public_key + self.mask_public_key + self.self_mask_commitment + signing
        )


@dataclass(frozen=True)
class Roster:
    """Phase 2 starts: the admitted clients in index order and FCP's Harary graph on them:
    position q of a cycle of n positions holds node ``permutation[q]``; each node's
    neighbourhood is the ``degree`` nodes within ``(degree - 1) / 2`` positions of its own,
    itself included; ``threshold`` shares of a neighbourhood reconstruct a secret.

    Raises :class:`SecureProtocolError` when the graph or a key is malformed."""

    entries: tuple[RosterEntry, ...]
    degree: int
    threshold: int
    permutation: tuple[int, ...]

    def __post_init__(self) -> None:
        n = len(self.entries)
        if n < 1:
            raise SecureProtocolError("the roster lists no client")
        if self.degree == 0 and self.threshold == 0 and not self.permutation:
            return  # too few clients for a graph: the round has no secure sum
        if not (self.degree == n or (1 <= self.degree < n and self.degree % 2 == 1)):
            raise SecureProtocolError(
                f"the roster's degree must be odd and in [1, {n}), or {n} (the complete graph), "
                f"was {self.degree}"
            )
        if not 1 <= self.threshold <= self.degree:
            raise SecureProtocolError(
                f"the roster's threshold must be in [1, degree = {self.degree}], "
                f"was {self.threshold}"
            )
        if sorted(self.permutation) != list(range(n)):
            raise SecureProtocolError(
                f"the roster's permutation must hold each index 0..{n - 1} once, "
                f"was {list(self.permutation)}"
            )
        for i, e in enumerate(self.entries):
            for name, value in (
                ("encryptionPublicKey", e.encryption_public_key),
                ("maskPublicKey", e.mask_public_key),
                ("selfMaskCommitment", e.self_mask_commitment),
            ):
                if len(value) != KEY_BYTES:
                    raise SecureProtocolError(
                        f"roster entry {i}: {name} must be {KEY_BYTES} bytes, was {len(value)}"
                    )

    def neighbourhood(self, node: int) -> tuple[int, ...]:
        """The ``degree`` nodes within ``(degree - 1) / 2`` positions of ``node``'s position on
        the cycle, ``node`` itself included, in index order."""
        n = len(self.entries)
        if self.degree == n:
            return tuple(range(n))
        position = self.permutation.index(node)
        half = (self.degree - 1) // 2
        return tuple(sorted({self.permutation[(position + o) % n] for o in range(-half, half + 1)}))

    def digest(self, ctx: bytes) -> bytes:
        """:func:`~.primitives.roster_digest` of this roster and its graph under ``ctx``: its
        entries as the survivor statement holds them (:meth:`RosterEntry.statement_bytes`), k, t
        and the permutation. Every share dealt on this roster is sealed under it."""
        return roster_digest(
            ctx,
            [e.statement_bytes() for e in self.entries],
            self.degree,
            self.threshold,
            self.permutation,
        )


@dataclass(frozen=True)
class RoutedShare:
    """Phase 3 starts: sealed shares the job routes to their recipient, from ``sender``."""

    sender: int
    ciphertext: bytes
    commitments: bytes = b""
    """The sender's Feldman commitments (ShareKeys.commitments), checked before the receipt."""


@dataclass(frozen=True)
class Commitments:
    """Phase 3 starts: one dealer's Feldman commitments (its ``ShareKeys.commitments``), which
    the job writes once for everyone before the :class:`Shares`."""

    sender: int
    commitments: bytes


@dataclass(frozen=True)
class Shares:
    """Phase 3 starts: the sealed shares addressed to ``recipient`` whose ShareKeys the job took."""

    recipient: int
    shares: tuple[RoutedShare, ...]


@dataclass(frozen=True)
class Confirmed:
    """Phase 4 starts: who the job confirmed from the receipts (U2 from now on), and the pairs
    ``(lo, hi)`` that do not mask with each other."""

    confirmed: tuple[int, ...]
    cuts: tuple[tuple[int, int], ...]


@dataclass(frozen=True)
class Survivors:
    """Phase 5 starts: who was confirmed (U2) and who sent a masked input (U3); each client of
    U3 signs the survivor statement."""

    shared: tuple[int, ...]
    masked_input: tuple[int, ...]


@dataclass(frozen=True)
class SignedSurvivors:
    """One signer's signature of the survivor statement, by roster index."""

    index: int
    signature: bytes


@dataclass(frozen=True)
class Consistency:
    """Phase 6 starts: the survivors' signatures of the survivor statement the job accepted,
    ascending by index; a client reveals shares only if enough of them are on the statement it
    signed."""

    signatures: tuple[SignedSurvivors, ...]

    def by_index(self) -> dict[int, bytes]:
        """``{index: signature}``; the first of repeated indices wins (as Java's client)."""
        out: dict[int, bytes] = {}
        for s in self.signatures:
            out.setdefault(s.index, s.signature)
        return out
