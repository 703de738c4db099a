"""The consistency round (phase 5, Bonawitz et al., CCS 2017, Section 4): each survivor signs one
survivor statement, and reveals shares in phase 6 only when at least T = (n + A) // 2 + 1
clients of the U3 it signed signed the same statement (Java: SurvivorStatement,
ClientSession.signSurvivors and unmask, RoundThresholds.signatureThreshold)."""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Mapping
from dataclasses import replace

import numpy as np
import pytest
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from privagg_client import SecureProtocolError, UnmaskRefused
from privagg_client.secure import (
    AdvertiseKeys,
    ClientSession,
    Consistency,
    Roster,
    RoutedShare,
    Shares,
    SignedSurvivors,
    quantize,
)
from privagg_client.secure import primitives
from privagg_client.secure.primitives import (
    has_small_order,
    round_context,
    sign,
    signing_public_key,
    survivor_statement,
    verify,
)
from privagg_client.secure.thresholds import ThreatModel, check_graph, signature_threshold
from privagg_client.secure_round import decode_secure_round, encode_secure_message
from privagg_client import wire
from secagg_server import (
    SMALL_ORDER_SIGNING_KEY,
    SeededRandomness,
    SurvivorSignatures,
    advertise_problem,
    make_roster,
    unmasked_sum,
)

JOB_ID = "consistency-job"
ROUND = 9
SESSION = bytes(range(16))
CONTEXT = round_context(JOB_ID, ROUND, SESSION)
THREAT = ThreatModel(0.1, 0.1)
D = 6


class KeptRandomness(SeededRandomness):
    """Seeded randomness that keeps its byte draws: the second 32 bytes are the session's signing
    key (after c_sk; the mask key and the self-mask seed are scalars, drawn with randbelow),
    which a test uses to sign as that client would (a colluder signing anything, or a client
    outside U3)."""

    def __init__(self, seed: int) -> None:
        super().__init__(seed)
        self.draws: list[bytes] = []

    def token_bytes(self, n: int) -> bytes:
        out = super().token_bytes(n)
        self.draws.append(out)
        return out

    @property
    def signing_key(self) -> bytes:
        assert len(self.draws[1]) == 32
        return self.draws[1]


class Cohort:
    """``n`` sessions at the default rates (12 clients: k = 9, t = 6, A = 1, T = 7) through
    phase 4: routed shares, everyone who shared confirmed with ``cuts``, masked inputs of all but
    ``drop_at_masked_input``. ``threat`` None: unchecked sessions (``unchecked_for_tests``).

    ``alter_roster`` gives client u a signing key the job would have refused (none, one of
    another length, one of small order), listed by a lying server; u advertised it itself (a
    colluder, or a client from before v3), since a client refuses a roster entry with its
    encryption key and a signing key other than its own."""

    def __init__(
        self,
        n: int = 12,
        degree: int = 9,
        threshold: int = 6,
        threat: ThreatModel | None = THREAT,
        drop_at_share: Collection[int] = (),
        drop_at_masked_input: Collection[int] = (),
        alter_roster: Mapping[int, bytes] | None = None,
        cuts: Collection[tuple[int, int]] = (),
    ) -> None:
        self.randomness = [KeptRandomness(500 + u) for u in range(n)]
        self.sessions = [
            ClientSession(JOB_ID, ROUND, SESSION, self.randomness[u], threat)
            if threat is not None
            else ClientSession.unchecked_for_tests(JOB_ID, ROUND, SESSION, self.randomness[u])
            for u in range(n)
        ]
        roster = make_roster([s.advertise() for s in self.sessions], degree, threshold, CONTEXT)
        if alter_roster:
            entries = list(roster.entries)
            for u, key in alter_roster.items():
                e = entries[u]
                entries[u] = type(e)(
                    e.encryption_public_key, e.mask_public_key, e.self_mask_commitment, key
                )
                # Shown its entry with a key it did not advertise, u would refuse the roster
                # (test_review5_findings): here u advertised that key itself.
                own = self.sessions[u]
                with pytest.raises(SecureProtocolError, match="but other keys"):
                    ClientSession(
                        JOB_ID, ROUND, SESSION, SeededRandomness(500 + u), THREAT
                    ).on_roster(Roster(tuple(entries), degree, threshold, roster.permutation))
                own._keys = replace(own._keys, signing_public_key=key)
            roster = Roster(tuple(entries), roster.degree, roster.threshold, roster.permutation)
        self.roster = roster
        inbox: dict[int, list[RoutedShare]] = {v: [] for v in range(n)}
        for u, s in enumerate(self.sessions):
            sealed = s.on_roster(roster)
            if u not in drop_at_share:
                for share in sealed:
                    inbox[share.index].append(RoutedShare(u, share.ciphertext, s.commitments))
        self.confirmed = [u for u in range(n) if u not in drop_at_share]
        rng = np.random.default_rng(n)
        self.x = {u: quantize(rng.normal(size=D) * 0.2, 1.0, rng) for u in range(n)}
        self.masked = {}
        for u in self.confirmed:
            self.sessions[u].on_shares(Shares(u, tuple(inbox[u])))
            assert self.sessions[u].receipt() == ()
            self.sessions[u].on_confirmed(self.confirmed, cuts)
            if u not in drop_at_masked_input:
                self.masked[u] = self.sessions[u].masked_input(self.x[u])
        self.survivors = sorted(self.masked)

    def statement(self, masked_input: Collection[int]) -> bytes:
        return SurvivorSignatures(
            CONTEXT, self.roster, self.confirmed, (), masked_input
        ).statement


# -- (1) a happy round --------------------------------------------------------------------


def test_every_survivor_signs_the_same_statement_and_the_round_unmasks_exactly() -> None:
    c = Cohort(drop_at_masked_input={4})
    job = SurvivorSignatures(CONTEXT, c.roster, c.confirmed, (), c.survivors)
    for u in c.survivors:
        assert job.accept(u, c.sessions[u].sign_survivors(c.confirmed, c.survivors))
        assert c.sessions[u].statement == job.statement
    assert job.refused == [] and sorted(job.signatures) == c.survivors
    consistency = Consistency(job.consistency())
    assert [s.index for s in consistency.signatures] == c.survivors
    unmask = {u: c.sessions[u].unmask(consistency.by_index()) for u in c.survivors}
    assert all(c.sessions[u].signature_threshold == 7 for u in c.survivors)
    total = unmasked_sum(CONTEXT, c.roster, set(c.confirmed), c.masked, unmask)
    expected = sum((c.x[u] for u in c.survivors), np.zeros(D, dtype=np.int64))
    np.testing.assert_array_equal(total, expected)
    # Client 4 dropped after phase 4's Confirmed: its neighbours reveal its mask key's shares.
    assert any(s.index == 4 for u in c.survivors for s in unmask[u].mask_key_shares)


def test_exactly_t_signatures_suffice_and_one_fewer_does_not() -> None:
    c = Cohort()
    signatures = {u: c.sessions[u].sign_survivors(c.confirmed, c.survivors) for u in c.survivors}
    six = {u: signatures[u] for u in range(6)}
    with pytest.raises(UnmaskRefused, match="only 6 survivors signed .* fewer than 7"):
        c.sessions[0].unmask(six)
    seven = {u: signatures[u] for u in range(7)}
    revealed = c.sessions[0].unmask(seven)
    assert revealed.self_mask_shares
    assert c.sessions[0].unmask(signatures) == revealed  # a second call: the same shares


# -- (2) a lying server shows two halves two lists ----------------------------------------


def _garbage(index: int) -> bytes:
    return bytes([index]) * 64


def test_two_halves_shown_two_lists_each_get_too_few_signatures_and_reveal_nothing() -> None:
    c = Cohort()
    half_a, half_b = list(range(6)), list(range(6, 12))
    u3_a = [u for u in range(12) if u != 6]  # shown to 0..5: drops 6, whose mask key it wants
    u3_b = [u for u in range(12) if u != 0]  # shown to 6..11: drops 0
    signed_a = {u: c.sessions[u].sign_survivors(c.confirmed, u3_a) for u in half_a}
    signed_b = {u: c.sessions[u].sign_survivors(c.confirmed, u3_b) for u in half_b}
    assert c.statement(u3_a) != c.statement(u3_b)
    # Each half gets its own half's signatures, the other half's (of the other list) and junk
    # in the missing names: 6 valid of 12, below T = 7.
    for mine, theirs in ((signed_a, signed_b), (signed_b, signed_a)):
        forwarded: dict[int, bytes] = {**theirs, **mine}
        for u in list(theirs)[:3]:
            forwarded[u] = _garbage(u)
        for u in mine:
            with pytest.raises(UnmaskRefused, match="only 6 survivors signed the survivor list it"):
                c.sessions[u].unmask(forwarded)
            assert c.sessions[u]._revealed is None  # nothing revealed, nothing kept to reveal


def test_with_a_colluder_signing_both_lists_at_most_one_list_reaches_t() -> None:
    # A = 1: client 11 colludes and signs whatever it is shown. Honest halves of 6 and 5: the
    # colluder lifts the first to T = 7, never the second; two lists would need 2T <= n + A.
    c = Cohort()
    half_a, half_b, colluder = list(range(6)), list(range(6, 11)), 11
    u3_a = [u for u in range(12) if u != 6]
    u3_b = [u for u in range(12) if u != 0]
    signed_a = {u: c.sessions[u].sign_survivors(c.confirmed, u3_a) for u in half_a}
    signed_b = {u: c.sessions[u].sign_survivors(c.confirmed, u3_b) for u in half_b}
    key = c.randomness[colluder].signing_key
    to_a = {**signed_a, colluder: sign(key, c.statement(u3_a))}
    to_b = {**signed_b, colluder: sign(key, c.statement(u3_b))}
    assert all(c.sessions[u].unmask(to_a).self_mask_shares for u in half_a)
    for u in half_b:
        with pytest.raises(UnmaskRefused, match="only 6 survivors signed .* fewer than 7"):
            c.sessions[u].unmask({**to_b, **signed_a})
    # Client 6 is dropped in the list half A unmasked: half A reveals its mask key's shares,
    # and no client of half B (which holds the rest of 6's self-mask shares) reveals anything.
    assert any(s.index == 6 for u in half_a for s in c.sessions[u].unmask(to_a).mask_key_shares)


# -- (3) one list per session --------------------------------------------------------------


def test_a_session_signs_one_survivor_list() -> None:
    c = Cohort(drop_at_masked_input={2, 9})
    me = c.sessions[0]
    first = me.sign_survivors(c.confirmed, c.survivors)
    assert len(first) == 64
    again = me.sign_survivors(list(reversed(c.confirmed)), list(reversed(c.survivors)))
    assert again == first  # the same U3 as a set, in another order: the identical signature
    other = [u for u in c.survivors if u != 5]
    with pytest.raises(UnmaskRefused, match=r"already signed the survivor list \[.*\]; it signs "
                       "one list per session"):
        me.sign_survivors(c.confirmed, other)
    with pytest.raises(UnmaskRefused, match="one list per session"):
        me.sign_survivors(c.confirmed, [*c.survivors, 2])
    assert me.sign_survivors(c.confirmed, c.survivors) == first
    assert me.statement == c.statement(c.survivors)


# -- (4) what does not count ---------------------------------------------------------------


def test_signatures_outside_u3_or_the_roster_malformed_or_repeated_do_not_count() -> None:
    c = Cohort(drop_at_masked_input={3})
    me = c.sessions[0]
    signatures = {u: c.sessions[u].sign_survivors(c.confirmed, c.survivors) for u in c.survivors}
    statement = c.statement(c.survivors)
    valid = {u: signatures[u] for u in c.survivors[:6]}  # one fewer than T = 7
    other_statement = c.statement([u for u in c.survivors if u != 1])
    attempts: dict[int, object] = {
        **valid,
        3: sign(c.randomness[3].signing_key, statement),  # valid, but 3 is not in U3
        -1: signatures[c.survivors[6]],  # a valid signature under an index outside the roster
        12: signatures[c.survivors[6]],
        100: signatures[c.survivors[7]],
        c.survivors[6]: signatures[c.survivors[6]][:63],  # truncated
        c.survivors[7]: signatures[c.survivors[7]] + b"\x00",  # too long
        c.survivors[8]: b"",
        c.survivors[9]: sign(c.randomness[c.survivors[9]].signing_key, other_statement),
        c.survivors[10]: "not bytes",
    }
    signed = me.sign_survivors(c.confirmed, c.survivors)
    assert signed == signatures[0]
    assert me.valid_signers(attempts) == tuple(c.survivors[:6])  # type: ignore[arg-type]
    with pytest.raises(UnmaskRefused, match="only 6 survivors signed"):
        me.unmask(attempts)  # type: ignore[arg-type]
    # Repeats in the Consistency message: the first of an index wins, so a repeat adds nothing.
    repeated = Consistency(
        (
            *(SignedSurvivors(u, s) for u, s in valid.items()),
            SignedSurvivors(c.survivors[6], _garbage(1)),
            SignedSurvivors(c.survivors[6], signatures[c.survivors[6]]),
            *(SignedSurvivors(u, s) for u, s in valid.items()),
        )
    )
    with pytest.raises(UnmaskRefused, match="only 6 survivors signed"):
        me.unmask(repeated.by_index())
    # The seventh genuine signature: now it reveals.
    assert me.unmask({**valid, c.survivors[6]: signatures[c.survivors[6]]}).self_mask_shares


@pytest.mark.parametrize("key", [b"", bytes(3), bytes(33)])
def test_a_roster_entry_without_a_32_byte_signing_key_never_counts(key: bytes) -> None:
    c = Cohort(alter_roster={5: key})
    signatures = {u: c.sessions[u].sign_survivors(c.confirmed, c.survivors) for u in c.survivors}
    me = c.sessions[0]
    assert 5 not in me.valid_signers(signatures)
    assert len(me.valid_signers(signatures)) == 11
    # The statement holds 32 zero bytes for that key, as Java's client puts them.
    entries = [e.statement_bytes() for e in c.roster.entries]
    assert entries[5][96:] == bytes(32)
    expected = survivor_statement(
        CONTEXT, entries, 9, 6, c.roster.permutation, c.confirmed, (), c.survivors
    )
    assert me.statement == expected
    six = {u: signatures[u] for u in (1, 2, 3, 4, 5, 6, 7)}  # 5's does not count: 6 of 7
    with pytest.raises(UnmaskRefused, match="only 6 survivors signed"):
        me.unmask(six)


# -- (4b) signing keys of small order ------------------------------------------------------

SMALL_ORDER_KEYS = [
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
]
"""Java's ``SigningKeys.SMALL_ORDER``: the Ed25519 encodings of small-order points."""


def _top_bit_set(key: bytes) -> bytes:
    return key[:31] + bytes([key[31] | 0x80])


@pytest.mark.parametrize(
    "key",
    [*SMALL_ORDER_KEYS, *(_top_bit_set(k) for k in SMALL_ORDER_KEYS)],
    ids=[*(f"{i}" for i in range(7)), *(f"{i}-top-bit" for i in range(7))],
)
def test_keys_of_small_order_are_recognised_and_nothing_verifies_under_them(key: bytes) -> None:
    assert has_small_order(key)
    for signature in (bytes.fromhex("01" + "00" * 63), bytes(64), bytes([7]) * 64):
        assert verify(key, b"any statement", signature) is False  # never raises
    keys = AdvertiseKeys(bytes(32), bytes(32), bytes(32), key)
    assert advertise_problem(keys) == SMALL_ORDER_SIGNING_KEY


RFC_8032_PUBLIC_KEYS = [
    "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a",  # TEST 1
    "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c",  # TEST 2
    "fc51cd8e6218a1a38da47ed00230f0580816ed13ba3303ac5deb911548908025",  # TEST 3
]


def test_real_signing_keys_have_no_small_order_and_still_verify() -> None:
    keys = [bytes.fromhex(h) for h in RFC_8032_PUBLIC_KEYS]
    seeds = [bytes([i]) * 32 for i in (1, 2, 0x7F, 0xFF)]
    keys += [signing_public_key(seed) for seed in seeds]
    assert not any(has_small_order(k) for k in keys)
    for seed in seeds:
        public = signing_public_key(seed)
        assert verify(public, b"statement", sign(seed, b"statement"))
        assert advertise_problem(AdvertiseKeys(bytes(32), bytes(32), bytes(32), public)) is None
    with pytest.raises(ValueError, match="an Ed25519 public key is 32 bytes, was 31"):
        has_small_order(bytes(31))


def test_the_job_refuses_an_advertised_signing_key_of_small_order() -> None:
    sessions = [
        ClientSession(JOB_ID, ROUND, SESSION, SeededRandomness(700 + u), THREAT) for u in range(3)
    ]
    keys = [s.advertise() for s in sessions]
    assert make_roster(keys, 3, 2, CONTEXT).entries[1].signing_public_key == (
        keys[1].signing_public_key
    )
    weak = [keys[0], replace(keys[1], signing_public_key=bytes(32)), keys[2]]
    with pytest.raises(
        ValueError,
        match="AdvertiseKeys 1 rejected: signingPublicKey has small order; send a fresh "
        "Ed25519 key",
    ):
        make_roster(weak, 3, 2, CONTEXT)
    v2 = [keys[0], keys[1], replace(keys[2], signing_public_key=b"")]
    with pytest.raises(ValueError, match="AdvertiseKeys 2 rejected: signingPublicKey must have "
                       "32 bytes \\(Ed25519\\), had 0"):
        make_roster(v2, 3, 2, CONTEXT)


FORGED = bytes.fromhex("01" + "00" * 63)
"""R = the identity (y = 1), S = 0: it verifies under the all-zero key for any statement M with
[k]A = identity, k = SHA-512(R || A || M) mod L. The all-zero key is the point of order 4 with
y = 0, so that is whenever 4 divides k: for about one statement in four."""

ED25519_ORDER = 2**252 + 27742317777372353535851937790883648493


def _forgery_verifies_mathematically(statement: bytes) -> bool:
    k = int.from_bytes(hashlib.sha512(FORGED[:32] + bytes(32) + statement).digest(), "little")
    return k % ED25519_ORDER % 4 == 0


def _forgeable_signer(n: int = 12) -> int:
    """A roster index v (not 0, the client under test) such that, with v's signing key replaced
    by the all-zero key in the Cohort's roster and everyone a survivor, :data:`FORGED` verifies
    on the survivor statement: the statement, and so v, is a function of the seeded keys only."""
    keys = [
        ClientSession(JOB_ID, ROUND, SESSION, KeptRandomness(500 + u), THREAT).advertise()
        for u in range(n)
    ]
    roster = make_roster(keys, 9, 6, CONTEXT)
    for v in range(1, n):
        entries = list(roster.entries)
        entries[v] = replace(entries[v], signing_public_key=bytes(32))
        altered = replace(roster, entries=tuple(entries))
        statement = SurvivorSignatures(CONTEXT, altered, range(n), (), range(n)).statement
        if _forgery_verifies_mathematically(statement):
            return v
    raise AssertionError("no roster index makes the forgery verify; change the seeds")


def test_a_forged_signature_under_the_all_zero_signing_key_does_not_count(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A lying server lists the all-zero signing key for client v (the job would have refused it
    # as an AdvertiseKeys) and forwards a signature nobody made as v's.
    v = _forgeable_signer()
    c = Cohort(alter_roster={v: bytes(32)})
    signatures = {u: c.sessions[u].sign_survivors(c.confirmed, c.survivors) for u in c.survivors}
    me = c.sessions[0]
    statement = c.statement(c.survivors)
    assert me.statement == statement
    assert _forgery_verifies_mathematically(statement)
    try:
        Ed25519PublicKey.from_public_bytes(bytes(32)).verify(FORGED, statement)
    except InvalidSignature:
        pytest.skip(
            "this OpenSSL refuses the forged signature under the all-zero key itself, so there "
            "is no forgery for the small-order check to stop"
        )
    # Six genuine signatures of others and the forgery as v's: T = 7 if the forgery counted.
    genuine = [u for u in c.survivors if u != v][:6]
    forwarded = {**{u: signatures[u] for u in genuine}, v: FORGED}
    with monkeypatch.context() as without_the_check:
        without_the_check.setattr(primitives, "has_small_order", lambda key: False)
        assert me.valid_signers(forwarded) == tuple(sorted([*genuine, v]))
    assert me.valid_signers(forwarded) == tuple(genuine)
    with pytest.raises(UnmaskRefused, match="only 6 survivors signed .* fewer than 7"):
        me.unmask(forwarded)
    assert me._revealed is None
    # The job's own count refuses it too.
    job = SurvivorSignatures(CONTEXT, c.roster, c.confirmed, (), c.survivors)
    assert not job.accept(v, FORGED)
    assert job.refused == [f"{v}: signature does not verify"]
    # A seventh genuine signature, of another client, and it reveals.
    seventh = next(u for u in c.survivors if u != v and u not in genuine)
    assert me.unmask({**forwarded, seventh: signatures[seventh]}).self_mask_shares


# -- (5) U2 must be the Confirmed ----------------------------------------------------------


def test_u2_that_differs_from_the_confirmed_outside_the_neighbourhood_is_refused() -> None:
    n = 20
    probe = Cohort(n=n, degree=9, threshold=6, threat=None)
    outsiders = [v for v in range(n) if v not in probe.roster.neighbourhood(0)]
    absent, extra = outsiders[0], outsiders[1]
    c = Cohort(n=n, degree=9, threshold=6, threat=None, drop_at_share={extra})
    assert absent not in c.roster.neighbourhood(0) and extra not in c.roster.neighbourhood(0)
    me = c.sessions[0]
    without = [u for u in c.confirmed if u != absent]
    with pytest.raises(UnmaskRefused, match=rf"omits \[{absent}\] that it did"):
        me.sign_survivors(without, without)
    with_extra = sorted([*c.confirmed, extra])
    with pytest.raises(UnmaskRefused, match=rf"includes \[{extra}\] that it did not confirm"):
        me.sign_survivors(with_extra, c.survivors)
    assert len(me.sign_survivors(c.confirmed, c.survivors)) == 64


# -- the statement -------------------------------------------------------------------------


def test_the_statement_is_the_documented_digest_whatever_order_its_lists_come_in() -> None:
    from hashlib import sha256

    from privagg_client.secure.primitives import lp, u32

    n = 8
    entries = [bytes([i]) * 128 for i in range(n)]
    permutation = [3, 1, 4, 0, 5, 7, 2, 6]
    confirmed, masked = [6, 0, 2, 1, 7, 4, 3], [4, 7, 0, 3, 1, 2]
    cuts = [(6, 2), (1, 3), (7, 0), (2, 1), (4, 0), (3, 7)]
    ordered_cuts = [(0, 4), (0, 7), (1, 2), (1, 3), (2, 6), (3, 7)]

    def ints(values: list[int]) -> bytes:
        return u32(len(values)) + b"".join(u32(v) for v in values)

    spelled_out = sha256(
        lp("privagg-secagg-v1/survivors")
        + CONTEXT
        + u32(n)
        + b"".join(entries)
        + u32(5)
        + u32(3)
        + ints(permutation)
        + ints(sorted(confirmed))
        + u32(len(cuts))
        + b"".join(u32(lo) + u32(hi) for lo, hi in ordered_cuts)
        + ints(sorted(masked))
    ).digest()
    statement = survivor_statement(CONTEXT, entries, 5, 3, permutation, confirmed, cuts, masked)
    assert statement == spelled_out
    # The permutation is stated as the roster states it (its order is the graph).
    assert survivor_statement(
        CONTEXT, entries, 5, 3, sorted(permutation), confirmed, cuts, masked
    ) != statement
    for bad_cuts in ([(1, 1)], [(1, 8)], [(1, 2), (2, 1)]):
        with pytest.raises(ValueError, match="cuts must be distinct pairs"):
            survivor_statement(CONTEXT, entries, 5, 3, permutation, confirmed, bad_cuts, masked)
    with pytest.raises(ValueError, match="maskedInput must be distinct roster indices"):
        survivor_statement(CONTEXT, entries, 5, 3, permutation, confirmed, (), [1, 1])
    with pytest.raises(ValueError, match="roster entry 2 must be 128 bytes"):
        survivor_statement(CONTEXT, [*entries[:2], bytes(96)], 5, 3, [], [], (), [])


def test_a_session_signs_the_statement_of_its_confirmed_cuts() -> None:
    # Everyone confirmed with cut pairs (no threat model: any cuts); the statement each session
    # signs is the job's, whatever order and orientation the Confirmed gave the cuts in.
    cuts = [(8, 1), (0, 2), (5, 3)]
    c = Cohort(n=10, degree=9, threshold=4, threat=None, cuts=cuts)
    job = SurvivorSignatures(CONTEXT, c.roster, c.confirmed, [(3, 5), (1, 8), (2, 0)], c.survivors)
    for u in c.survivors:
        assert job.accept(u, c.sessions[u].sign_survivors(c.confirmed, c.survivors))
    assert c.sessions[0].statement == job.statement != c.statement(c.survivors)


# -- (6) T, as Java's RoundThresholds.signatureThreshold -----------------------------------


@pytest.mark.parametrize(
    "n, threat, colluders, expected",
    [
        (100, ThreatModel(0.1, 0.1), 10, 56),
        (3, ThreatModel(0.1, 0.1), 0, 2),
        (1000, ThreatModel(0.1, 0.1), 100, 551),
        # A curious server shows one list by definition: any signature will do.
        (1000, ThreatModel(0.1, 0.3, "curious-server"), 100, 1),
        (12, ThreatModel(0.1, 0.45, "curious-server"), 1, 1),
        (12, ThreatModel(0.1, 0.1), 1, 7),
        (10, ThreatModel(0.3, 0.1), 3, 7),
        (100, ThreatModel(0.29, 0.1), 29, 65),  # 0.29 * 100 = 28.999...: the shared slack
        (7, None, 0, 4),
    ],
)
def test_the_signature_threshold_is_javas(
    n: int, threat: ThreatModel | None, colluders: int, expected: int
) -> None:
    if threat is not None:
        assert threat.colluders(n) == colluders
    assert signature_threshold(n, threat) == expected


def test_against_a_curious_server_the_consistency_round_adds_no_bound() -> None:
    # SecureMixedClientsIT's rates: 12 clients, 6 of them may fail; Java gives k = 9, t = 2.
    check_graph(12, 9, 2, ThreatModel(0.1, 0.45, "curious-server"))


@pytest.mark.parametrize(
    "n, threat",
    [
        (2, ThreatModel(0.1, 0.1)),  # T = 2 > 2 - L = 1
        (10, ThreatModel(0.2, 0.3)),  # A = 2, T = 7, L = 4: 6 left
    ],
)
def test_a_roster_whose_consistency_round_could_fail_gets_no_graph(
    n: int, threat: ThreatModel
) -> None:
    with pytest.raises(SecureProtocolError, match=f"a roster of {n} gets no graph"):
        check_graph(n, n, 2, threat)


# -- the wire ------------------------------------------------------------------------------


def test_the_survivor_signature_and_the_consistency_message_on_the_wire() -> None:
    c = Cohort()
    me = c.sessions[0]
    signature = me.sign_survivors(c.confirmed, c.survivors)
    from privagg_client.secure import SurvivorSignature

    value = encode_secure_message(JOB_ID, ROUND, SESSION, "me", SurvivorSignature(signature))
    assert wire.decode("SecureMessage", value)["body"] == {"signature": signature}
    advertised = wire.decode(
        "SecureMessage", encode_secure_message(JOB_ID, ROUND, SESSION, "me", me.advertise())
    )["body"]
    assert advertised["signingPublicKey"] == me.advertise().signing_public_key
    assert len(advertised["signingPublicKey"]) == 32
    published = wire.encode(
        "SecureRound",
        {
            "jobId": JOB_ID,
            "round": ROUND,
            "session": SESSION,
            "body": {"signatures": [{"index": 2, "signature": b"s" * 64}]},
        },
    )
    body = decode_secure_round(published).body()
    assert body == Consistency((SignedSurvivors(2, b"s" * 64),))
