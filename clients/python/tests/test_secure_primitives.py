"""Secure aggregation's primitives against published vectors (RFC 5869, RFC 7748, RFC 8032's base
point) and the properties docs/secure-aggregation.md states: key symmetry, masks that seek, sealed
shares bound to their pair, mask keys and commitments as points of edwards25519's prime-order
subgroup."""

from __future__ import annotations

import numpy as np
import pytest
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from privagg_client.secure import group
from privagg_client.secure.primitives import (
    add_mask,
    decrypt_shares,
    encrypt_shares,
    hkdf,
    lp,
    mask,
    mask_agreement,
    mask_public_key,
    pairwise_mask_key,
    round_context,
    self_mask_commitment,
    self_mask_key,
    share_encryption_key,
    u32,
    u64,
    x25519,
    x25519_public_key,
)

SESSION = bytes(range(16))
KEY = bytes(range(32))


def test_encodings_are_big_endian_and_length_prefixed() -> None:
    assert u32(0x01020304) == b"\x01\x02\x03\x04"
    assert u64(1) == b"\x00" * 7 + b"\x01"
    assert lp("ab") == b"\x00\x00\x00\x02ab"
    assert lp("é") == b"\x00\x00\x00\x02\xc3\xa9"  # UTF-8 bytes are counted


def test_round_context_is_the_documented_concatenation() -> None:
    ctx = round_context("job-1", 7, SESSION)
    assert ctx == (
        b"\x00\x00\x00\x11privagg-secagg-v1"
        + b"\x00\x00\x00\x05job-1"
        + b"\x00" * 7
        + b"\x07"
        + SESSION
    )
    with pytest.raises(ValueError, match="a session is 16 bytes, was 3"):
        round_context("j", 1, b"abc")


def test_hkdf_matches_rfc_5869_test_case_3_empty_salt_and_info() -> None:
    """RFC 5869 appendix A.3 (SHA-256, zero-length salt and info): the first 32 of its 42 OKM
    bytes, since HKDF-Expand's output is a prefix of any longer output."""
    okm = bytes.fromhex(
        "8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d"
        "9d201395faa4b61a96c8"
    )
    assert hkdf(b"\x0b" * 22, b"") == okm[:32]


def test_the_hkdf_library_matches_rfc_5869_test_case_1() -> None:
    """RFC 5869 appendix A.1 has a salt, which the protocol never uses: this checks the
    library the protocol's :func:`hkdf` calls, with the case's own salt and length."""
    okm = bytes.fromhex(
        "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf"
        "34007208d5b887185865"
    )
    derived = HKDF(
        algorithm=hashes.SHA256(),
        length=42,
        salt=bytes(range(13)),
        info=bytes(range(0xF0, 0xFA)),
    ).derive(b"\x0b" * 22)
    assert derived == okm
    # The protocol's HKDF with the same info differs from it only in the (empty) salt.
    assert hkdf(b"\x0b" * 22, bytes(range(0xF0, 0xFA))) != okm[:32]


RFC7748_ALICE_SK = bytes.fromhex("77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a")
RFC7748_ALICE_PK = bytes.fromhex("8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a")
RFC7748_BOB_SK = bytes.fromhex("5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb")
RFC7748_BOB_PK = bytes.fromhex("de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f")
RFC7748_SHARED = bytes.fromhex("4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742")


def test_x25519_matches_rfc_7748_section_6_1() -> None:
    assert x25519_public_key(RFC7748_ALICE_SK) == RFC7748_ALICE_PK
    assert x25519_public_key(RFC7748_BOB_SK) == RFC7748_BOB_PK
    assert x25519(RFC7748_ALICE_SK, RFC7748_BOB_PK) == RFC7748_SHARED
    assert x25519(RFC7748_BOB_SK, RFC7748_ALICE_PK) == RFC7748_SHARED


def test_x25519_refuses_a_low_order_public_key() -> None:
    with pytest.raises(ValueError):
        x25519(RFC7748_ALICE_SK, bytes(32))


# Two mask keys: scalars below l, 32 bytes little-endian.
MASK_SK_A = group.scalar_bytes(0x0123456789ABCDEF * 2**180 + 77)
MASK_SK_B = group.scalar_bytes(group.ORDER - 12345)

RFC8032_BASE_POINT = bytes.fromhex(
    "5866666666666666666666666666666666666666666666666666666666666666"
)
"""B (RFC 8032, Section 5.1): y = 4/5, x even."""


def test_a_mask_public_key_is_s_sk_times_the_base_point() -> None:
    assert mask_public_key(group.scalar_bytes(1)) == RFC8032_BASE_POINT
    assert mask_public_key(group.scalar_bytes(2)) == group.plus(
        RFC8032_BASE_POINT, RFC8032_BASE_POINT
    )
    a = int.from_bytes(MASK_SK_A, "little")
    assert mask_public_key(MASK_SK_A) == group.times(RFC8032_BASE_POINT, a)
    assert group.is_valid(mask_public_key(MASK_SK_A))
    # A mask key is a scalar below l: l itself, or 31 or 33 bytes, is none.
    for bad in (group.ORDER.to_bytes(32, "little"), MASK_SK_A[:31], MASK_SK_A + b"\0"):
        with pytest.raises(ValueError):
            mask_public_key(bad)


def test_the_mask_agreement_is_diffie_hellman_in_the_prime_order_subgroup() -> None:
    a, b = (int.from_bytes(k, "little") for k in (MASK_SK_A, MASK_SK_B))
    pk_a, pk_b = mask_public_key(MASK_SK_A), mask_public_key(MASK_SK_B)
    shared = mask_agreement(MASK_SK_A, pk_b)
    assert shared == mask_agreement(MASK_SK_B, pk_a)
    assert shared == group.base_times(a * b % group.ORDER)
    assert len(shared) == 32 and group.is_valid(shared)


_ORDER_8_POINT = bytes.fromhex("26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05")


@pytest.mark.parametrize(
    "peer",
    [
        bytes([1]) + bytes(31),  # the identity
        bytes(32),  # (sqrt(-1), 0), of order 4
        _ORDER_8_POINT,
        # (0, -1), of order 2; and y = p, a non-canonical encoding of y = 0:
        bytes.fromhex("ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f"),
        bytes.fromhex("edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f"),
        bytes([2]) + bytes(31),  # not on the curve
        group.plus(RFC8032_BASE_POINT, _ORDER_8_POINT),  # on it, outside the subgroup
        RFC8032_BASE_POINT[:31],
    ],
    ids=["identity", "order 4", "order 8", "order 2", "non-canonical", "no point", "mixed order",
         "31 bytes"],
)
def test_the_mask_agreement_refuses_a_peer_key_outside_the_prime_order_subgroup(
    peer: bytes,
) -> None:
    # What X25519 refuses as a low-order key: a secret anybody could guess among a few values.
    assert not group.is_valid(peer)
    with pytest.raises(ValueError):
        mask_agreement(MASK_SK_A, peer)
    with pytest.raises(ValueError):
        pairwise_mask_key(round_context("j", 1, SESSION), MASK_SK_A, peer, 3, 8)


def test_pairwise_keys_are_the_same_from_either_side_and_bound_to_the_pair() -> None:
    ctx = round_context("j", 1, SESSION)
    pk_a, pk_b = mask_public_key(MASK_SK_A), mask_public_key(MASK_SK_B)
    shared = mask_agreement(MASK_SK_A, pk_b)
    ab = pairwise_mask_key(ctx, MASK_SK_A, pk_b, 3, 8)
    assert ab == pairwise_mask_key(ctx, MASK_SK_B, pk_a, 8, 3)
    expected_info = ctx + lp("pairwise-mask") + lp("model") + u32(3) + u32(8)
    assert ab == hkdf(shared, expected_info)
    assert ab != pairwise_mask_key(ctx, MASK_SK_A, pk_b, 3, 9)
    other_round = round_context("j", 2, SESSION)
    assert ab != pairwise_mask_key(other_round, MASK_SK_A, pk_b, 3, 8)
    # The share encryption keys are still X25519's (RFC 7748's pair).
    enc = share_encryption_key(ctx, RFC7748_ALICE_SK, RFC7748_BOB_PK, 3, 8)
    assert enc == share_encryption_key(ctx, RFC7748_BOB_SK, RFC7748_ALICE_PK, 8, 3)
    assert enc == hkdf(RFC7748_SHARED, ctx + lp("share-encryption") + u32(3) + u32(8))


def test_self_mask_key_and_commitment_are_the_documented_values() -> None:
    ctx = round_context("j", 1, SESSION)
    b = bytes([9]) * 32  # a scalar below l (its top byte is below 0x10)
    assert self_mask_key(ctx, b, 4) == hkdf(b, ctx + lp("self-mask") + lp("model") + u32(4))
    # The commitment is b B, the constant term's Feldman commitment of b's sharing.
    commitment = group.times(RFC8032_BASE_POINT, int.from_bytes(b, "little"))
    assert self_mask_commitment(b) == commitment
    assert self_mask_commitment(b) != self_mask_commitment(bytes([9]) * 31 + bytes([8]))
    # A seed is a scalar below l.
    with pytest.raises(ValueError):
        self_mask_commitment(group.ORDER.to_bytes(32, "little"))


def _little_endian_words(data: bytes) -> list[int]:
    return [int.from_bytes(data[i : i + 8], "little") for i in range(0, len(data), 8)]


def _aes_block(key: bytes, block: int) -> bytes:
    encryptor = Cipher(algorithms.AES(key), modes.ECB()).encryptor()
    return encryptor.update(block.to_bytes(16, "big"))


def test_a_mask_is_the_aes_ctr_keystream_from_a_zero_counter_as_little_endian_words() -> None:
    words = mask(KEY, 0, 6)
    keystream = b"".join(_aes_block(KEY, i) for i in range(3))
    assert words.tolist() == _little_endian_words(keystream)


def test_the_counter_is_the_whole_block_so_seeking_past_2_to_the_64_blocks_carries() -> None:
    block = 1 << 64  # the lower 64 bits of the counter wrap here
    words = mask(KEY, 2 * block - 2, 4)
    expected = _aes_block(KEY, block - 1) + _aes_block(KEY, block)
    assert words.tolist() == _little_endian_words(expected)


@pytest.mark.parametrize("start, count", [(0, 1), (1, 1), (37, 43), (38, 43), (99, 1), (2, 0)])
def test_any_range_of_a_mask_equals_that_slice_of_the_whole(start: int, count: int) -> None:
    whole = mask(KEY, 0, 100)
    np.testing.assert_array_equal(mask(KEY, start, count), whole[start : start + count])


def test_a_mask_longer_than_one_chunk_is_contiguous(monkeypatch: pytest.MonkeyPatch) -> None:
    import privagg_client.secure.primitives as primitives

    whole = mask(KEY, 0, 50)
    monkeypatch.setattr(primitives, "_MASK_CHUNK_WORDS", 7)
    np.testing.assert_array_equal(mask(KEY, 3, 47), whole[3:])
    y = np.zeros(50, dtype=np.uint64)
    add_mask(y, KEY, +1)
    np.testing.assert_array_equal(y, whole)


def test_adding_and_subtracting_a_mask_wraps_modulo_2_to_the_64() -> None:
    x = np.array([0, 1, 2**64 - 1, 12345], dtype=np.uint64)
    y = x.copy()
    add_mask(y, KEY, +1)
    m = mask(KEY, 0, 4)
    assert y.tolist() == [(a + b) % 2**64 for a, b in zip(x.tolist(), m.tolist())]
    add_mask(y, KEY, -1)
    np.testing.assert_array_equal(y, x)
    with pytest.raises(ValueError, match="sign must be"):
        add_mask(y, KEY, 2)


def test_sealed_shares_open_only_for_their_pair_context_and_roster() -> None:
    ctx = round_context("j", 1, SESSION)
    nonce = bytes(12)
    roster = bytes(range(32))
    sealed = encrypt_shares(KEY, ctx, 2, 5, roster, b"p" * 64, nonce)
    assert len(sealed) == 12 + 64 + 16 and sealed[:12] == nonce  # 92 bytes: two 32-byte shares
    assert decrypt_shares(KEY, ctx, 2, 5, roster, sealed) == b"p" * 64
    for sender, recipient, c in ((5, 2, ctx), (2, 6, ctx), (2, 5, round_context("j", 2, SESSION))):
        with pytest.raises(InvalidTag):
            decrypt_shares(KEY, c, sender, recipient, roster, sealed)
    # A holder shown another roster than the dealer's cannot open the share.
    other_roster = roster[:31] + bytes([roster[31] ^ 1])
    with pytest.raises(InvalidTag):
        decrypt_shares(KEY, ctx, 2, 5, other_roster, sealed)
    tampered = sealed[:20] + bytes([sealed[20] ^ 1]) + sealed[21:]
    with pytest.raises(InvalidTag):
        decrypt_shares(KEY, ctx, 2, 5, roster, tampered)
    for short in (b"", roster[:31], roster + b"x"):
        with pytest.raises(ValueError, match="a roster digest is 32 bytes"):
            encrypt_shares(KEY, ctx, 2, 5, short, b"p" * 64, nonce)
        with pytest.raises(ValueError, match="a roster digest is 32 bytes"):
            decrypt_shares(KEY, ctx, 2, 5, short, sealed)
