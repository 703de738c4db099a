"""The Java implementation's test vectors of secure aggregation v1 (a copy of
src/test/resources/secagg/vectors-v1.json, format in its "_format" field), reproduced from
Python: Java and Python clients interoperate only if every byte matches."""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from privagg_client.secure import (
    ClientSession,
    Roster,
    RosterEntry,
    RoutedShare,
    Shares,
    group,
    shamir,
)
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
    roster_digest,
    roster_permutation,
    roster_permutation_seed,
    round_context,
    self_mask_commitment,
    self_mask_key,
    share_aad,
    share_encryption_key,
    sign,
    signing_public_key,
    survivor_statement,
    u32,
    verify,
    x25519,
    x25519_public_key,
)
from secagg_server import job_statement, make_roster, sign_and_unmask, unmasked_sum

VECTORS: dict[str, Any] = json.loads(
    (Path(__file__).parent / "data" / "secagg-vectors-v1.json").read_text("utf-8")
)
CONTEXT = VECTORS["context"]
CLIENTS = VECTORS["clients"]
ROUND = VECTORS["round"]


def _hex(s: str) -> bytes:
    return bytes.fromhex(s)


def _fixed(label: str) -> bytes:
    return hashlib.sha256(f"privagg-secagg-v1 test vector {label}".encode()).digest()


def _scalar(label: str) -> int:
    """scalar(label) of the format: SHA-512 of the label, read little-endian, mod l."""
    digest = hashlib.sha512(f"privagg-secagg-v1 test vector {label}".encode()).digest()
    return int.from_bytes(digest, "little") % group.ORDER


def _ctx() -> bytes:
    return round_context(CONTEXT["jobId"], CONTEXT["round"], _hex(CONTEXT["session"]))


def _words(signed: list[int]) -> list[int]:
    return [w % 2**64 for w in signed]


def test_the_fixed_inputs_are_derived_as_the_format_says() -> None:
    assert VECTORS["version"] == 1
    assert _hex(CONTEXT["session"]) == _fixed("session")[:16]
    for c in CLIENTS:
        i = c["index"]
        assert _hex(c["encryptionPrivateKey"]) == _fixed(f"c_sk {i}")
        # Scalars below l, 32 bytes little-endian.
        assert _hex(c["maskPrivateKey"]) == group.scalar_bytes(_scalar(f"s_sk {i}"))
        assert _hex(c["selfMaskSeed"]) == group.scalar_bytes(_scalar(f"b {i}"))
    s = VECTORS["shamir"]
    assert _hex(s["secret"]) == group.scalar_bytes(_scalar("shamir secret"))
    for k, c in enumerate(s["coefficients"], start=1):
        assert _hex(c) == group.scalar_bytes(_scalar(f"shamir coefficient {k}"))
    assert _hex(VECTORS["shareEncryption"]["nonce"]) == _fixed("nonce")[:12]
    assert _hex(VECTORS["shareEncryption"]["rosterDigest"]) == _fixed("roster digest")


def test_round_context() -> None:
    assert _ctx() == _hex(CONTEXT["ctx"])


@pytest.mark.parametrize("client", CLIENTS, ids=lambda c: f"client {c['index']}")
def test_client_keys_commitment_and_self_mask_key(client: dict[str, Any]) -> None:
    i, b = client["index"], _hex(client["selfMaskSeed"])
    # The encryption key pair is X25519's ...
    c_sk = _hex(client["encryptionPrivateKey"])
    assert x25519_public_key(c_sk) == _hex(client["encryptionPublicKey"])
    # ... the mask key pair edwards25519's: s_pk = s_sk B, a point of the prime-order subgroup.
    s_sk, s_pk = _hex(client["maskPrivateKey"]), _hex(client["maskPublicKey"])
    assert mask_public_key(s_sk) == s_pk == group.base_times(group.scalar(s_sk))
    assert group.is_valid(s_pk)
    # The self-mask commitment is b B.
    commitment = _hex(client["selfMaskCommitment"])
    assert self_mask_commitment(b) == commitment == group.base_times(group.scalar(b))
    assert group.is_valid(commitment)
    assert self_mask_key(_ctx(), b, i) == _hex(client["selfMaskKey"])


@pytest.mark.parametrize("pair", VECTORS["pairs"], ids=lambda p: f"pair {p['u']}-{p['v']}")
def test_pair_secrets_and_keys_from_both_sides(pair: dict[str, Any]) -> None:
    u, v = CLIENTS[pair["u"]], CLIENTS[pair["v"]]
    for a, b in ((u, v), (v, u)):
        c_sk, c_pk = _hex(a["encryptionPrivateKey"]), _hex(b["encryptionPublicKey"])
        s_sk, s_pk = _hex(a["maskPrivateKey"]), _hex(b["maskPublicKey"])
        assert x25519(c_sk, c_pk) == _hex(pair["encryptionSharedSecret"])
        # encode(s_sk_u s_pk_v), the same from either side.
        assert mask_agreement(s_sk, s_pk) == _hex(pair["maskSharedSecret"])
        assert group.times(s_pk, group.scalar(s_sk)) == _hex(pair["maskSharedSecret"])
        u, v = a["index"], b["index"]
        assert share_encryption_key(_ctx(), c_sk, c_pk, u, v) == _hex(pair["shareEncryptionKey"])
        assert pairwise_mask_key(_ctx(), s_sk, s_pk, u, v) == _hex(pair["pairwiseMaskKey"])


@pytest.mark.parametrize("vector", VECTORS["masks"], ids=lambda m: m["key"][:8])
def test_mask_words(vector: dict[str, Any]) -> None:
    key = _hex(vector["key"])
    assert mask(key, 0, 8).tolist() == _words(vector["words0to7"])
    assert mask(key, 1000, 4).tolist() == _words(vector["words1000to1003"])


def test_shamir_shares_and_reconstruction() -> None:
    s = VECTORS["shamir"]
    t = s["threshold"]
    secret = group.scalar(_hex(s["secret"]))
    coefficients = [group.scalar(_hex(c)) for c in s["coefficients"]]
    assert len(coefficients) == t - 1
    assert all(1 <= c < group.ORDER for c in coefficients)
    xs = [share["x"] for share in s["shares"]]
    computed = shamir.split(secret, coefficients, xs)
    for share in s["shares"]:
        assert shamir.share_to_bytes(computed[share["x"]]) == _hex(share["share"])
    last_t = {e["x"]: shamir.share_from_bytes(_hex(e["share"])) for e in s["shares"][-t:]}
    assert shamir.reconstruct(last_t) == secret
    first_t = {e["x"]: shamir.share_from_bytes(_hex(e["share"])) for e in s["shares"][:t]}
    assert shamir.reconstruct(first_t) == secret


def test_shamir_feldman_commitments_and_every_share_checks_against_them() -> None:
    s = VECTORS["shamir"]
    t = s["threshold"]
    coefficients = [group.scalar(_hex(c)) for c in s["coefficients"]]
    commitments = _hex(s["commitments"])
    # a_k B for k = 1 .. t - 1, concatenated: 32 (t - 1) bytes.
    assert len(commitments) == group.commitment_bytes(t) == 32 * (t - 1)
    assert commitments == group.commitments(coefficients)
    for k, c in enumerate(coefficients):
        assert commitments[32 * k : 32 * (k + 1)] == group.base_times(c)
    # The constant term's commitment is secret B (a mask key's s_pk, a seed's commitment).
    constant = group.base_times(group.scalar(_hex(s["secret"])))
    other = group.commitments([c % (group.ORDER - 1) + 1 for c in coefficients])
    for e in s["shares"]:
        share = _hex(e["share"])
        assert group.verifies(constant, commitments, t, e["x"], share), f"x = {e['x']}"
        # A share at another x, another share, or other commitments do not check.
        assert not group.verifies(constant, commitments, t, e["x"] + 1, share)
        wrong = shamir.share_to_bytes((shamir.share_from_bytes(share) + 1) % group.ORDER)
        assert not group.verifies(constant, commitments, t, e["x"], wrong)
        assert not group.verifies(constant, other, t, e["x"], share)
        assert not group.verifies(group.base_times(1), commitments, t, e["x"], share)


def test_share_encryption() -> None:
    e = VECTORS["shareEncryption"]
    digest = _hex(e["rosterDigest"])
    aad = share_aad(_ctx(), e["sender"], e["recipient"], digest)
    assert aad == _hex(e["aad"])
    assert aad == _ctx() + u32(e["sender"]) + u32(e["recipient"]) + digest
    assert _hex(e["key"]) == _hex(VECTORS["pairs"][0]["shareEncryptionKey"])
    key, nonce, plaintext = _hex(e["key"]), _hex(e["nonce"]), _hex(e["plaintext"])
    assert len(plaintext) == 2 * shamir.SHARE_BYTES  # a pair of 32-byte shares
    sealed = encrypt_shares(key, _ctx(), e["sender"], e["recipient"], digest, plaintext, nonce)
    assert sealed == _hex(e["ciphertext"])
    assert len(sealed) == 12 + 2 * shamir.SHARE_BYTES + 16 == 92
    # AES-256-GCM with exactly the vector's aad gives the vector's ciphertext.
    assert nonce + AESGCM(key).encrypt(nonce, plaintext, _hex(e["aad"])) == sealed
    assert decrypt_shares(key, _ctx(), e["sender"], e["recipient"], digest, sealed) == plaintext
    # A holder shown another roster (another digest) cannot open it.
    other = digest[:-1] + bytes([digest[-1] ^ 1])
    with pytest.raises(InvalidTag):
        decrypt_shares(key, _ctx(), e["sender"], e["recipient"], other, sealed)


class _FixedSecrets:
    """Gives a session the vectors' client secrets in the order a session draws them: c_sk and
    the signing key fixed('sig i') as bytes, s_sk and b (each drawn as 1 + randbelow(l - 1)) as
    scalars; then fixed values for what the vectors leave free (coefficients,
    nonces)."""

    def __init__(self, client: dict[str, Any]) -> None:
        self._bytes = [_hex(client["encryptionPrivateKey"]), _fixed(f"sig {client['index']}")]
        s_sk = group.scalar(_hex(client["maskPrivateKey"]))
        b = group.scalar(_hex(client["selfMaskSeed"]))
        self._scalars = [(group.ORDER - 1, s_sk - 1), (group.ORDER - 1, b - 1)]

    def token_bytes(self, n: int) -> bytes:
        if self._bytes:
            out = self._bytes.pop(0)
            assert len(out) == n
            return out
        return hashlib.sha256(bytes(n)).digest()[:n]

    def randbelow(self, n: int) -> int:
        if self._scalars:
            bound, value = self._scalars.pop(0)
            assert n == bound and 0 <= value < n
            return value
        return 12345 % n


def _sessions_through_phase_3(
    cuts: tuple[tuple[int, int], ...] = (),
) -> tuple[Roster, list[ClientSession], list[np.ndarray]]:
    """The round's three clients as ClientSessions on the vectors' secrets and graph, everyone
    confirmed with ``cuts``, and their masked inputs. Unchecked sessions: the vectors cut a pair
    of a roster of 3, whose threat model allows no colluder to account for it."""
    sessions = [
        ClientSession.unchecked_for_tests(
            CONTEXT["jobId"], CONTEXT["round"], _hex(CONTEXT["session"]), _FixedSecrets(c)
        )
        for c in CLIENTS
    ]
    roster = replace(
        make_roster([s.advertise() for s in sessions], ROUND["degree"], ROUND["threshold"]),
        permutation=tuple(ROUND["permutation"]),
    )
    inbox: dict[int, list[RoutedShare]] = {i: [] for i in range(len(CLIENTS))}
    for u, session in enumerate(sessions):
        for sealed in session.on_roster(roster):
            inbox[sealed.index].append(RoutedShare(u, sealed.ciphertext, session.commitments))
    masked = []
    for u, session in enumerate(sessions):
        session.on_shares(Shares(u, tuple(inbox[u])))
        assert session.rejected_shares == {} and session.receipt() == ()
        session.on_confirmed(range(len(CLIENTS)), cuts)
        masked.append(session.masked_input(np.array(ROUND["units"][u], dtype=np.int64)))
    return roster, sessions, masked


def test_masked_inputs_of_a_whole_round_and_their_unmasked_sum() -> None:
    roster, sessions, masked = _sessions_through_phase_3()
    for u, y in enumerate(masked):
        assert y.astype("<u8").tobytes() == _hex(ROUND["maskedInputs"][u]), f"client {u}"
    total = np.sum(masked, axis=0, dtype=np.uint64)
    assert total.tolist() == _words(ROUND["sumOfMaskedInputs"])
    everyone = range(len(CLIENTS))
    unmask = sign_and_unmask(dict(enumerate(sessions)), _ctx(), roster, everyone, (), everyone)
    assert set(unmask) == set(everyone)
    result = unmasked_sum(_ctx(), roster, set(everyone), dict(enumerate(masked)), unmask)
    assert result.tolist() == ROUND["sum"]


def test_the_dropout_correction_terms_and_sum() -> None:
    dropout = ROUND["dropout"]
    u2, u3 = set(dropout["shared"]), set(dropout["maskedInput"])
    dropped = u2 - u3
    ctx = _ctx()
    expected_terms = set()
    for u in sorted(u3):
        c = CLIENTS[u]
        expected_terms.add((self_mask_key(ctx, _hex(c["selfMaskSeed"]), u), -1))
        for w in sorted(dropped):
            s_sk_u, s_pk_w = _hex(c["maskPrivateKey"]), _hex(CLIENTS[w]["maskPublicKey"])
            key = pairwise_mask_key(ctx, s_sk_u, s_pk_w, u, w)
            expected_terms.add((key, -1 if u < w else +1))
    terms = {(_hex(t["key"]), t["sign"]) for t in dropout["correctionTerms"]}
    assert terms == expected_terms
    total = np.zeros(ROUND["d"], dtype=np.uint64)
    for u in sorted(u3):
        total += np.frombuffer(_hex(ROUND["maskedInputs"][u]), dtype="<u8")
    for key, sign in terms:
        add_mask(total, key, sign)
    assert total.view(np.int64).tolist() == dropout["sum"]
    # And through the sessions: clients 0 and 1 reveal what the job needs to find those terms.
    roster, sessions, masked = _sessions_through_phase_3()
    unmask = sign_and_unmask(dict(enumerate(sessions)), ctx, roster, u2, (), u3)
    assert set(unmask) == u3
    result = unmasked_sum(ctx, roster, u2, {u: masked[u] for u in u3}, unmask)
    assert result.tolist() == dropout["sum"]


def test_hkdf_info_layout_of_the_pairwise_key() -> None:
    """The pairwise key is HKDF of the shared secret with the documented info, spelled out."""
    pair = VECTORS["pairs"][0]
    info = _ctx() + lp("pairwise-mask") + lp("model") + u32(pair["u"]) + u32(pair["v"])
    assert hkdf(_hex(pair["maskSharedSecret"]), info) == _hex(pair["pairwiseMaskKey"])


def test_the_roster_permutation_is_derived_from_the_context_and_every_entry() -> None:
    vector = VECTORS["rosterPermutation"]
    entries = [
        (_fixed(f"roster c {i}"), _fixed(f"roster s {i}"), _fixed(f"roster b {i}"))
        for i in range(vector["size"])
    ]
    seed = roster_permutation_seed(_ctx(), entries)
    assert seed.hex() == vector["seed"]
    assert [int(w) for w in mask(seed, 0, 4)] == _words(vector["words0to3"])
    assert roster_permutation(_ctx(), entries) == vector["permutation"]
    # One byte of one entry moves the whole ring: nobody picks a seat by choosing its keys alone.
    entries[3] = (entries[3][0], entries[3][1], bytes(32))
    assert roster_permutation(_ctx(), entries) != vector["permutation"]


CONSISTENCY: dict[str, Any] = VECTORS["consistency"]
"""The survivor statement of the round's 3 clients with signing keys fixed('sig i'), and each
client's Ed25519 signature of it."""


def _consistency_entries() -> list[bytes]:
    return [
        _hex(c["encryptionPublicKey"])
        + _hex(c["maskPublicKey"])
        + _hex(c["selfMaskCommitment"])
        + _hex(CONSISTENCY["signingPublicKeys"][c["index"]])
        for c in CLIENTS
    ]


def _consistency_cuts() -> tuple[tuple[int, int], ...]:
    return tuple((lo, hi) for lo, hi in CONSISTENCY["cuts"])


def test_the_roster_digest() -> None:
    c = CONSISTENCY
    digest = roster_digest(
        _ctx(), _consistency_entries(), c["degree"], c["threshold"], c["permutation"]
    )
    assert digest.hex() == c["rosterDigest"]
    # Spelled out field by field.
    data = (
        lp("privagg-secagg-v1/roster")
        + _ctx()
        + u32(len(CLIENTS))
        + b"".join(_consistency_entries())
        + u32(c["degree"])
        + u32(c["threshold"])
        + u32(len(c["permutation"]))
        + b"".join(u32(p) for p in c["permutation"])
    )
    assert hashlib.sha256(data).hexdigest() == c["rosterDigest"]
    # As a Roster computes it from its entries (RosterEntry.statement_bytes), ...
    entries = tuple(
        RosterEntry(e[:32], e[32:64], e[64:96], e[96:]) for e in _consistency_entries()
    )
    roster = Roster(entries, c["degree"], c["threshold"], tuple(c["permutation"]))
    assert roster.digest(_ctx()).hex() == c["rosterDigest"]
    # ... which takes a signing key that is not 32 bytes as 32 zero bytes, as the statement does.
    unsigned = Roster(
        tuple(RosterEntry(e.encryption_public_key, e.mask_public_key, e.self_mask_commitment)
              for e in entries),
        c["degree"], c["threshold"], tuple(c["permutation"]),
    )
    zeroed = [e[:96] + bytes(32) for e in _consistency_entries()]
    assert unsigned.digest(_ctx()) == roster_digest(
        _ctx(), zeroed, c["degree"], c["threshold"], c["permutation"]
    )
    # Any change to the roster or its graph changes it.
    assert roster_digest(_ctx(), zeroed, c["degree"], c["threshold"], c["permutation"]) != digest
    assert roster_digest(
        _ctx(), _consistency_entries(), c["degree"], c["threshold"] + 1, c["permutation"]
    ) != digest


def test_sessions_seal_their_shares_under_the_vectors_roster_digest() -> None:
    c = CONSISTENCY
    roster, _, _ = _sessions_through_phase_3()
    assert roster.digest(_ctx()).hex() == c["rosterDigest"]
    ctx = _ctx()
    for u in range(len(CLIENTS)):
        fresh = ClientSession.unchecked_for_tests(
            CONTEXT["jobId"], CONTEXT["round"], _hex(CONTEXT["session"]), _FixedSecrets(CLIENTS[u])
        )
        for share in fresh.on_roster(roster):
            v = share.index
            key = share_encryption_key(
                ctx, _hex(CLIENTS[u]["encryptionPrivateKey"]),
                _hex(CLIENTS[v]["encryptionPublicKey"]), u, v,
            )
            opened = decrypt_shares(key, ctx, u, v, _hex(c["rosterDigest"]), share.ciphertext)
            assert len(opened) == 2 * shamir.SHARE_BYTES


def test_the_signing_keys_are_ed25519_of_the_fixed_seeds() -> None:
    for i, (private, public) in enumerate(
        zip(CONSISTENCY["signingPrivateKeys"], CONSISTENCY["signingPublicKeys"])
    ):
        assert _hex(private) == _fixed(f"sig {i}")
        assert signing_public_key(_hex(private)).hex() == public
    assert len(CONSISTENCY["signingPrivateKeys"]) == len(CLIENTS)


def test_the_survivor_statement_digest_and_its_signatures() -> None:
    c = CONSISTENCY
    statement = survivor_statement(
        _ctx(),
        _consistency_entries(),
        c["degree"],
        c["threshold"],
        c["permutation"],
        c["confirmed"],
        _consistency_cuts(),
        c["maskedInput"],
    )
    assert statement.hex() == c["statement"]
    for i, private in enumerate(c["signingPrivateKeys"]):
        signature = sign(_hex(private), statement)
        assert signature.hex() == c["signatures"][i], f"client {i}"
        assert verify(_hex(c["signingPublicKeys"][i]), statement, signature)
    # Order and orientation of what the statement lists do not change it (it sorts them) ...
    reordered = survivor_statement(
        _ctx(), _consistency_entries(), c["degree"], c["threshold"], c["permutation"],
        list(reversed(c["confirmed"])), [(hi, lo) for lo, hi in _consistency_cuts()],
        list(reversed(c["maskedInput"])),
    )
    assert reordered == statement
    # ... any survivor list does.
    other = survivor_statement(
        _ctx(), _consistency_entries(), c["degree"], c["threshold"], c["permutation"],
        c["confirmed"], _consistency_cuts(), c["confirmed"],
    )
    assert other != statement


def test_the_statement_spelled_out_field_by_field() -> None:
    c = CONSISTENCY
    ints = lambda values: u32(len(values)) + b"".join(u32(v) for v in values)  # noqa: E731
    data = (
        lp("privagg-secagg-v1/survivors")
        + _ctx()
        + u32(len(CLIENTS))
        + b"".join(_consistency_entries())
        + u32(c["degree"])
        + u32(c["threshold"])
        + ints(c["permutation"])
        + ints(sorted(c["confirmed"]))
        + u32(len(c["cuts"]))
        + b"".join(u32(lo) + u32(hi) for lo, hi in sorted(_consistency_cuts()))
        + ints(sorted(c["maskedInput"]))
    )
    assert hashlib.sha256(data).hexdigest() == c["statement"]


def test_sessions_sign_the_vectors_statement_and_unmask_on_its_signatures() -> None:
    c = CONSISTENCY
    assert c["permutation"] == ROUND["permutation"] and c["degree"] == ROUND["degree"]
    assert c["threshold"] == ROUND["threshold"]
    roster, sessions, _ = _sessions_through_phase_3(_consistency_cuts())
    assert [s.advertise().signing_public_key.hex() for s in sessions] == c["signingPublicKeys"]
    u3 = c["maskedInput"]
    assert job_statement(_ctx(), roster, c["confirmed"], _consistency_cuts(), u3).hex() == (
        c["statement"]
    )
    for u in u3:
        signature = sessions[u].sign_survivors(c["confirmed"], u3)
        assert signature.hex() == c["signatures"][u]
        assert sessions[u].statement.hex() == c["statement"]
    signatures = {u: _hex(c["signatures"][u]) for u in u3}
    for u in u3:
        revealed = sessions[u].unmask(signatures)
        assert {s.index for s in revealed.self_mask_shares} <= set(u3)
