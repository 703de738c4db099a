"""The byte-level primitives of secure aggregation wire protocol v1 (docs/secure-aggregation.md):
encodings, the round context, HKDF, X25519 (the share encryption keys), the mask keys and
self-mask commitments in edwards25519's prime-order subgroup (:mod:`.group`), the derived keys,
share encryption, masks, and the consistency round's Ed25519 signatures of the survivor
statement."""

from __future__ import annotations

import hashlib
import itertools
import os
from typing import TYPE_CHECKING

import numpy as np
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from . import group

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Sequence

    import numpy.typing as npt

    WordArray = npt.NDArray[np.uint64]

PROTOCOL = "privagg-secagg-v1"
"""The protocol's name and version, the first field of every round context."""

MODEL_VECTOR = "model"
"""The name of the one masked vector per round in version 1."""

KEY_BYTES = 32
"""X25519 keys, edwards25519 points and scalars (mask keys, self-mask seeds and commitments),
derived keys."""

SIGNATURE_BYTES = 64
"""An Ed25519 signature (RFC 8032); its keys are :data:`KEY_BYTES`."""

ROSTER_ENTRY_BYTES = 4 * KEY_BYTES
"""A roster entry in the survivor statement: encryption key, mask key, commitment, signing key."""

SURVIVORS_DOMAIN = PROTOCOL + "/survivors"
"""The first field of the survivor statement."""

ROSTER_DOMAIN = PROTOCOL + "/roster"
"""The first field of the roster digest."""

ROSTER_DIGEST_BYTES = 32
"""A roster digest (:func:`roster_digest`): SHA-256."""

SESSION_BYTES = 16
NONCE_BYTES = 12
TAG_BYTES = 16

# 64 KiB of keystream a call into a reused buffer: cryptography's update() of a fresh 1 MiB or
# larger buffer ran at about 80 MB/s here, update_into() of 64 KiB at about 3 GB/s.
_MASK_CHUNK_WORDS = 1 << 13
"""Mask coordinates expanded per AES call: 8 MiB of keystream at a time."""


def u32(x: int) -> bytes:
    """``x`` as 4 bytes, big-endian, unsigned."""
    return x.to_bytes(4, "big")


def u64(x: int) -> bytes:
    """``x`` as 8 bytes, big-endian, unsigned."""
    return x.to_bytes(8, "big")


def lp(b: bytes | str) -> bytes:
    """``u32(len(b)) || b``; strings are UTF-8."""
    data = b.encode("utf-8") if isinstance(b, str) else b
    return u32(len(data)) + data


def round_context(job_id: str, round_number: int, session: bytes) -> bytes:
    """``ctx = lp("privagg-secagg-v1") || lp(jobId) || u64(round) || session``."""
    if len(session) != SESSION_BYTES:
        raise ValueError(f"a session is {SESSION_BYTES} bytes, was {len(session)}")
    if not 0 <= round_number < 1 << 64:
        raise ValueError(f"round must be in [0, 2^64), was {round_number}")
    return lp(PROTOCOL) + lp(job_id) + u64(round_number) + session


def hkdf(ikm: bytes, info: bytes) -> bytes:
    """HKDF-SHA256 (RFC 5869) with an empty salt, 32 bytes of output. (cryptography's default
    salt, 32 zero bytes, is the same HMAC key as an empty one.)"""
    return HKDF(algorithm=hashes.SHA256(), length=KEY_BYTES, salt=None, info=info).derive(ikm)


def x25519_public_key(private_key: bytes) -> bytes:
    """The RFC 7748 public key of 32 private-key bytes (clamped as RFC 7748 does)."""
    key = X25519PrivateKey.from_private_bytes(private_key).public_key()
    return key.public_bytes(Encoding.Raw, PublicFormat.Raw)


def x25519(private_key: bytes, public_key: bytes) -> bytes:
    """X25519(sk, pk) of RFC 7748. Raises ValueError for a public key of low order (an all-zero
    shared secret) or of the wrong length."""
    peer = X25519PublicKey.from_public_bytes(public_key)
    return X25519PrivateKey.from_private_bytes(private_key).exchange(peer)


def _pair(u: int, v: int) -> bytes:
    return u32(min(u, v)) + u32(max(u, v))


def share_encryption_key(ctx: bytes, c_sk_u: bytes, c_pk_v: bytes, u: int, v: int) -> bytes:
    """The AES-256-GCM key for shares between clients u and v (the same from either side)."""
    return hkdf(x25519(c_sk_u, c_pk_v), ctx + lp("share-encryption") + _pair(u, v))


def mask_public_key(s_sk: bytes) -> bytes:
    """``s_pk = s_sk B``: the mask key is a scalar of edwards25519's prime-order subgroup, so its
    public key is the commitment to the constant term of its sharing (verifiable secret
    sharing)."""
    return group.base_times(group.scalar(s_sk))


def mask_agreement(s_sk_u: bytes, s_pk_v: bytes) -> bytes:
    """``encode(s_sk_u s_pk_v)``, the same from either side; ValueError for a key that is no
    point of the prime-order subgroup."""
    return group.times(s_pk_v, group.scalar(s_sk_u))


def pairwise_mask_key(
    ctx: bytes, s_sk_u: bytes, s_pk_v: bytes, u: int, v: int, vector: str = MODEL_VECTOR
) -> bytes:
    """The key of the pairwise mask of clients u and v (the same from either side)."""
    return hkdf(
        mask_agreement(s_sk_u, s_pk_v), ctx + lp("pairwise-mask") + lp(vector) + _pair(u, v)
    )


def self_mask_key(ctx: bytes, b_u: bytes, u: int, vector: str = MODEL_VECTOR) -> bytes:
    """The key of client u's self-mask, from its seed ``b_u``."""
    return hkdf(b_u, ctx + lp("self-mask") + lp(vector) + u32(u))


def self_mask_commitment(b_u: bytes) -> bytes:
    """``b_u B``: the seed is a scalar below l, and its commitment the constant term's of its
    sharing (verifiable secret sharing)."""
    return group.base_times(group.scalar(b_u))


def share_aad(ctx: bytes, sender: int, recipient: int, roster_digest: bytes) -> bytes:
    """The associated data of the shares ``sender`` encrypts to ``recipient``: ``ctx ||
    u32(sender) || u32(recipient) || rosterDigest`` (:func:`roster_digest` of the roster the
    dealer was shown). Raises ValueError for a digest that is not 32 bytes."""
    if len(roster_digest) != ROSTER_DIGEST_BYTES:
        raise ValueError(
            f"a roster digest is {ROSTER_DIGEST_BYTES} bytes, was {len(roster_digest)}"
        )
    return ctx + u32(sender) + u32(recipient) + roster_digest


def encrypt_shares(
    key: bytes,
    ctx: bytes,
    sender: int,
    recipient: int,
    roster_digest: bytes,
    plaintext: bytes,
    nonce: bytes | None = None,
) -> bytes:
    """``nonce || AES-256-GCM ciphertext || tag`` (``nonce``: 12 random bytes unless given), with
    associated data :func:`share_aad`: it opens only for ``recipient``, in this round context,
    under the same ``roster_digest``."""
    aad = share_aad(ctx, sender, recipient, roster_digest)
    nonce = os.urandom(NONCE_BYTES) if nonce is None else nonce
    if len(nonce) != NONCE_BYTES:
        raise ValueError(f"a nonce is {NONCE_BYTES} bytes, was {len(nonce)}")
    return nonce + AESGCM(key).encrypt(nonce, plaintext, aad)


def decrypt_shares(
    key: bytes, ctx: bytes, sender: int, recipient: int, roster_digest: bytes, sealed: bytes
) -> bytes:
    """The plaintext of :func:`encrypt_shares`'s output. Raises
    ``cryptography.exceptions.InvalidTag`` when it was altered or is not for this pair, context
    or roster digest (a holder shown another roster than the dealer's)."""
    aad = share_aad(ctx, sender, recipient, roster_digest)
    if len(sealed) < NONCE_BYTES + TAG_BYTES:
        raise ValueError(
            f"sealed shares are at least {NONCE_BYTES + TAG_BYTES} bytes, were {len(sealed)}"
        )
    nonce, body = sealed[:NONCE_BYTES], sealed[NONCE_BYTES:]
    return AESGCM(key).decrypt(nonce, body, aad)


def _mask_chunks(key: bytes, start: int, count: int) -> Iterator[tuple[int, WordArray]]:
    """Coordinates ``[start, start + count)`` of the mask of ``key`` as (offset, words) chunks.
    ``words`` is a view of one reused buffer: use it before taking the next chunk."""
    if start < 0 or count < 0:
        raise ValueError(f"a mask range needs start >= 0 and count >= 0, was {start}, {count}")
    # Coordinate j is in block j / 2: start the counter there and drop the half block before.
    skip = 8 * (start % 2)
    counter_block = (start // 2).to_bytes(16, "big")
    encryptor = Cipher(algorithms.AES(key), modes.CTR(counter_block)).encryptor()
    encryptor.update(bytes(skip))
    zeros = memoryview(bytes(8 * _MASK_CHUNK_WORDS))
    buffer = bytearray(8 * _MASK_CHUNK_WORDS + 15)  # update_into wants a block's room to spare
    words = np.frombuffer(buffer, dtype="<u8", count=_MASK_CHUNK_WORDS)
    done = 0
    while done < count:
        n = min(_MASK_CHUNK_WORDS, count - done)
        encryptor.update_into(zeros[: 8 * n], buffer)
        yield done, words[:n]
        done += n


def mask(key: bytes, start: int, count: int) -> WordArray:
    """Coordinates ``[start, start + count)`` of the mask ``key`` expands into: little-endian
    64-bit words of the AES-256-CTR keystream from an all-zero counter block."""
    out = np.empty(count, dtype=np.uint64)
    for offset, words in _mask_chunks(key, start, count):
        out[offset : offset + len(words)] = words
    return out


def add_mask(vector: WordArray, key: bytes, sign: int) -> None:
    """Adds ``sign`` (+1 or -1) times the mask of ``key`` to ``vector`` in place, modulo 2^64."""
    if sign not in (1, -1):
        raise ValueError(f"sign must be +1 or -1, was {sign}")
    for offset, words in _mask_chunks(key, 0, len(vector)):
        part = vector[offset : offset + len(words)]
        if sign > 0:
            np.add(part, words, out=part)
        else:
            np.subtract(part, words, out=part)


def roster_permutation_seed(ctx: bytes, entries: Sequence[tuple[bytes, bytes, bytes]]) -> bytes:
    """``SHA-256(ctx || lp("harary-permutation") || u32(n) || e_0 || ... || e_{n-1})`` over the
    entries ``c_pk || s_pk || commitment`` in sorted (canonical) order: the seed of the Harary
    graph's ring, which no reordering of the roster changes and every client can check."""
    digest = hashlib.sha256()
    digest.update(ctx + lp("harary-permutation") + u32(len(entries)))
    for entry in sorted(b"".join(e) for e in entries):
        digest.update(entry)
    return digest.digest()


def roster_permutation(ctx: bytes, entries: Sequence[tuple[bytes, bytes, bytes]]) -> list[int]:
    """The ring of a sparse roster: a Fisher-Yates shuffle of the canonical ranks ``0..n-1``
    (for i from n - 1 down to 1, swap i with j uniform in [0, i]) drawing from the mask words of
    the seed, each draw accepting a word w iff ``w < 2^64 - (2^64 mod (i + 1))`` and taking
    ``j = w mod (i + 1)``; position q holds the roster index of the entry of the rank put there."""
    n = len(entries)
    by_rank = sorted(range(n), key=lambda i: b"".join(entries[i]))
    seed = roster_permutation_seed(ctx, entries)
    ranks = list(range(n))
    words = (int(w) for start in itertools.count(0, 1024) for w in mask(seed, start, 1024))
    for i in range(n - 1, 0, -1):
        bound = i + 1
        limit = 2**64 - (2**64 % bound)
        w = next(words)
        while w >= limit:
            w = next(words)
        j = w % bound
        ranks[i], ranks[j] = ranks[j], ranks[i]
    return [by_rank[r] for r in ranks]


def roster_digest(
    ctx: bytes,
    entries: Sequence[bytes],
    degree: int,
    threshold: int,
    permutation: Sequence[int],
) -> bytes:
    """The digest of the roster a client was shown, with its graph (Java ``RosterDigest``)::

        SHA-256( lp("privagg-secagg-v1/roster") || ctx || u32(n) || n entries of 128 bytes
                 || u32(k) || u32(t) || u32(|perm|) || perm )

    ``entries``: the roster's entries in index order, each ``c_pk || s_pk || commitment ||
    signing key`` (:data:`ROSTER_ENTRY_BYTES`, as the survivor statement holds them:
    ``RosterEntry.statement_bytes``); k, t and the permutation as the ``Roster`` states them,
    every integer a big-endian u32. Every share is sealed under it (:func:`share_aad`), so a share
    opens only for a holder shown the same roster as its dealer: clients a lying server shows
    different rosters (of other sizes, so of other thresholds T) hold nothing of each other.
    Raises ValueError for an entry of another length."""
    digest = hashlib.sha256()
    digest.update(lp(ROSTER_DOMAIN) + ctx + u32(len(entries)))
    for i, entry in enumerate(entries):
        if len(entry) != ROSTER_ENTRY_BYTES:
            raise ValueError(
                f"roster entry {i} must be {ROSTER_ENTRY_BYTES} bytes, was {len(entry)}"
            )
        digest.update(entry)
    digest.update(u32(degree) + u32(threshold) + u32(len(permutation)))
    digest.update(b"".join(u32(p) for p in permutation))
    return digest.digest()


# -- the consistency round -------------------------------------------------------------------


def signing_public_key(private_key: bytes) -> bytes:
    """The 32-byte RFC 8032 Ed25519 public key of a 32-byte private key (seed)."""
    key = Ed25519PrivateKey.from_private_bytes(private_key).public_key()
    return key.public_bytes(Encoding.Raw, PublicFormat.Raw)


def sign(private_key: bytes, message: bytes) -> bytes:
    """The 64-byte Ed25519 signature (RFC 8032, deterministic) of ``message``."""
    return Ed25519PrivateKey.from_private_bytes(private_key).sign(message)


_SMALL_ORDER_SIGNING_KEYS = frozenset(
    bytes.fromhex(h)
    for h in (
        "0000000000000000000000000000000000000000000000000000000000000000",
        "0100000000000000000000000000000000000000000000000000000000000000",
        "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05",
        "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a",
        "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
        "edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
        "eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
    )
)
"""The encodings (top bit of byte 31 cleared) of the Ed25519 points of small order, and of
non-canonical ones of them, as Java's ``SigningKeys.SMALL_ORDER`` lists them."""


# Under a key of small order, signatures nobody made verify (e.g. S = 0, R = the identity).
def has_small_order(public_key: bytes) -> bool:
    """Whether the 32-byte Ed25519 ``public_key`` is (or encodes) a point of small order, as
    Java's ``SigningKeys.hasSmallOrder``: the key with the top bit of byte 31 cleared is one of
    :data:`_SMALL_ORDER_SIGNING_KEYS`. Raises ValueError for a key of another length."""
    if len(public_key) != KEY_BYTES:
        raise ValueError(f"an Ed25519 public key is {KEY_BYTES} bytes, was {len(public_key)}")
    key = bytearray(public_key)
    key[KEY_BYTES - 1] &= 0x7F
    return bytes(key) in _SMALL_ORDER_SIGNING_KEYS


def verify(public_key: object, message: bytes, signature: object) -> bool:
    """Whether ``signature`` is a valid Ed25519 signature of ``message`` under the 32-byte
    ``public_key``; False, never an exception, for a key or signature of another length or type,
    a key that is no curve point, or a key of small order (:func:`has_small_order`)."""
    if not (isinstance(public_key, bytes) and isinstance(signature, bytes)):
        return False
    if len(public_key) != KEY_BYTES or len(signature) != SIGNATURE_BYTES:
        return False
    if has_small_order(public_key):
        return False
    try:
        Ed25519PublicKey.from_public_bytes(public_key).verify(signature, message)
    except (InvalidSignature, ValueError):
        return False
    return True


def _ascending(name: str, indices: Iterable[int], n: int) -> list[int]:
    members = list(indices)
    if len(set(members)) != len(members) or any(not 0 <= i < n for i in members):
        raise ValueError(f"{name} must be distinct roster indices in [0, {n}), was {members}")
    return sorted(members)


def survivor_statement(
    ctx: bytes,
    entries: Sequence[bytes],
    degree: int,
    threshold: int,
    permutation: Sequence[int],
    confirmed: Iterable[int],
    cuts: Iterable[tuple[int, int]],
    masked_input: Iterable[int],
) -> bytes:
    """What each survivor signs in the consistency round (Java ``SurvivorStatement``)::

        SHA-256( lp("privagg-secagg-v1/survivors") || ctx || u32(n) || n entries of 128 bytes
                 || u32(k) || u32(t) || u32(|perm|) || perm || u32(|U2|) || U2
                 || u32(|cuts|) || cuts || u32(|U3|) || U3 )

    ``entries``: the roster's entries in index order, each ``c_pk || s_pk || commitment ||
    signing key`` (:data:`ROSTER_ENTRY_BYTES`); U2 (``confirmed``) and U3 (``masked_input``) go
    in ascending, the cuts as ``u32(lo) || u32(hi)`` pairs with lo < hi, ascending by (lo, hi);
    every integer a big-endian u32. Raises ValueError for an entry of another length, an index
    outside the roster or repeated, or a cut that is no pair of distinct indices (or repeats)."""
    n = len(entries)
    digest = hashlib.sha256()
    digest.update(lp(SURVIVORS_DOMAIN) + ctx + u32(n))
    for i, entry in enumerate(entries):
        if len(entry) != ROSTER_ENTRY_BYTES:
            raise ValueError(
                f"roster entry {i} must be {ROSTER_ENTRY_BYTES} bytes, was {len(entry)}"
            )
        digest.update(entry)
    digest.update(u32(degree) + u32(threshold))

    def ints(values: Sequence[int]) -> None:
        digest.update(u32(len(values)) + b"".join(u32(v) for v in values))

    ints(list(permutation))
    ints(_ascending("confirmed", confirmed, n))
    pairs: set[tuple[int, int]] = set()
    for cut in cuts:
        a, b = cut
        pair = (min(a, b), max(a, b))
        if a == b or not (0 <= a < n and 0 <= b < n) or pair in pairs:
            raise ValueError(
                f"cuts must be distinct pairs of distinct roster indices in [0, {n}), had {cut}"
            )
        pairs.add(pair)
    digest.update(u32(len(pairs)) + b"".join(u32(lo) + u32(hi) for lo, hi in sorted(pairs)))
    ints(_ascending("maskedInput", masked_input, n))
    return digest.digest()
