"""Whole secure rounds in memory: n Python sessions, the job's routing, its consistency round and
its unmasking (tests/secagg_server.py); dropouts in phases 2 and 3; the client's guards."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field, replace

import numpy as np
import pytest

from privagg_client import SecureProtocolError, SessionStateError, UnmaskRefused
from privagg_client.secure import (
    ClientSession,
    EncryptedShare,
    Roster,
    RosterEntry,
    RoutedShare,
    Shares,
    UnmaskShares,
    group,
    quantize,
)
from privagg_client.secure.primitives import roster_permutation, round_context
from secagg_server import SeededRandomness, make_roster, sign_and_unmask, unmasked_sum

JOB_ID = "secure-job"
ROUND = 3
SESSION = bytes.fromhex("00112233445566778899aabbccddeeff")
CLIP_NORM = 1.5
D = 33


_unchecked = ClientSession.unchecked_for_tests
"""Sessions that take any graph: these tests try arbitrary (k, t), not the job's."""


@dataclass
class Round:
    """A round's clients up to the routing of shares: the job's view of phases 1 and 2."""

    n: int
    degree: int
    threshold: int
    seed: int = 0
    drop_at_share: Collection[int] = ()
    sessions: list[ClientSession] = field(init=False)
    roster: Roster = field(init=False)
    inbox: dict[int, list[RoutedShare]] = field(init=False)
    confirmed: list[int] = field(init=False, default_factory=list)
    cuts: set[tuple[int, int]] = field(init=False, default_factory=set)

    def __post_init__(self) -> None:
        self.sessions = [
            _unchecked(JOB_ID, ROUND, SESSION, SeededRandomness(1000 * self.seed + u))
            for u in range(self.n)
        ]
        keys = [s.advertise() for s in self.sessions]
        self.roster = make_roster(
            keys, self.degree, self.threshold, round_context(JOB_ID, ROUND, SESSION)
        )
        self.inbox = {v: [] for v in range(self.n)}
        for u, session in enumerate(self.sessions):
            sealed = session.on_roster(self.roster)
            if u not in self.drop_at_share:
                for share in sealed:
                    # As the job routes them: with the dealer's Feldman commitments.
                    self.inbox[share.index].append(
                        RoutedShare(u, share.ciphertext, session.commitments)
                    )

    @property
    def shared(self) -> set[int]:
        return set(range(self.n)) - set(self.drop_at_share)

    def sign_and_unmask(self, survivors: Collection[int]) -> dict[int, UnmaskShares]:
        """Phases 5 and 6 with U2 the confirmed and U3 ``survivors``."""
        ctx = round_context(JOB_ID, ROUND, SESSION)
        sessions = dict(enumerate(self.sessions))
        return sign_and_unmask(sessions, ctx, self.roster, self.confirmed, self.cuts, survivors)

    def updates(self) -> dict[int, np.ndarray]:
        rng = np.random.default_rng(self.seed)
        return {u: quantize(rng.normal(size=D) * 0.3, CLIP_NORM, rng) for u in range(self.n)}

    def confirm(self) -> None:
        """Phase 3 as the job runs it here: every client of U2 opens its shares and sends its
        receipt; all are confirmed and each rejection cuts its pair."""
        receipts = {}
        for u in sorted(self.shared):
            self.sessions[u].on_shares(Shares(u, tuple(self.inbox[u])))
            receipts[u] = self.sessions[u].receipt()
        self.confirmed = sorted(self.shared)
        self.cuts = {(min(u, v), max(u, v)) for v in receipts for u in receipts[v]}
        for u in self.confirmed:
            self.sessions[u].on_confirmed(self.confirmed, self.cuts)

    def finish(self, drop_at_masked_input: Collection[int] = ()) -> tuple[np.ndarray, np.ndarray]:
        """Phases 3 to 6: the unmasked sum and the sum of the survivors' quantized updates."""
        x = self.updates()
        masked = {}
        self.confirm()
        for u in self.confirmed:
            if u not in drop_at_masked_input:
                masked[u] = self.sessions[u].masked_input(x[u])
        unmask = self.sign_and_unmask(masked)
        assert set(unmask) == set(masked)
        ctx = round_context(JOB_ID, ROUND, SESSION)
        total = unmasked_sum(ctx, self.roster, self.shared, masked, unmask, self.cuts)
        return total, sum((x[u] for u in masked), np.zeros(D, dtype=np.int64))


@pytest.mark.parametrize(
    "n, degree, threshold", [(10, 5, 3), (13, 7, 4), (16, 9, 5), (20, 9, 6), (11, 11, 6)]
)
def test_the_job_recovers_exactly_the_sum_of_the_quantized_updates(
    n: int, degree: int, threshold: int
) -> None:
    total, expected = Round(n, degree, threshold, seed=n).finish()
    np.testing.assert_array_equal(total, expected)


def test_the_sum_survives_dropouts_in_phase_2_and_phase_3() -> None:
    r = Round(17, 9, 5, seed=4, drop_at_share={2, 11})
    total, expected = r.finish(drop_at_masked_input={5, 14})
    np.testing.assert_array_equal(total, expected)
    survivors = r.shared - {5, 14}
    assert len(survivors) == 13


def test_clients_mask_pairwise_with_the_neighbours_that_shared_only() -> None:
    r = Round(12, 7, 4, seed=5, drop_at_share={3})
    u = next(v for v in r.roster.neighbourhood(3) if v != 3)
    session = r.sessions[u]
    r.confirm()
    assert 3 in session.neighbours and 3 not in session.masked_with
    assert session.masked_with == tuple(v for v in session.neighbours if v != 3)


def test_a_masked_input_is_not_the_input() -> None:
    r = Round(10, 5, 3, seed=6)
    x = r.updates()[0]
    r.confirm()
    y = r.sessions[0].masked_input(x)
    assert y.dtype == np.uint64 and len(y) == D
    assert not np.any(y == x.view(np.uint64))


def test_each_client_reveals_one_kind_of_share_per_neighbour() -> None:
    r = Round(15, 7, 4, seed=7, drop_at_share={1})
    x = r.updates()
    dropped = {4}
    masked = {}
    r.confirm()
    for u in sorted(r.shared):
        if u not in dropped:
            masked[u] = r.sessions[u].masked_input(x[u])
    for u, revealed in r.sign_and_unmask(masked).items():
        b = {s.index for s in revealed.self_mask_shares}
        s = {s.index for s in revealed.mask_key_shares}
        assert not b & s
        assert u in b and b <= set(masked) and s <= dropped
        assert 1 not in b | s  # it shared nothing, so nobody holds its shares


def test_the_harary_neighbourhood_is_the_k_nodes_around_the_position() -> None:
    r = Round(10, 5, 3)
    identity = replace(r.roster, permutation=tuple(range(10)))
    assert identity.neighbourhood(0) == (0, 1, 2, 8, 9)
    assert identity.neighbourhood(5) == (3, 4, 5, 6, 7)
    shuffled = replace(r.roster, permutation=(3, 1, 4, 0, 5, 9, 2, 6, 8, 7))
    # node 5 sits at position 4: positions 2..6 hold 4, 0, 5, 9, 2.
    assert shuffled.neighbourhood(5) == (0, 2, 4, 5, 9)
    # node 3 at position 0: positions 8, 9, 0, 1, 2 hold 8, 7, 3, 1, 4.
    assert shuffled.neighbourhood(3) == (1, 3, 4, 7, 8)
    assert replace(r.roster, degree=1, threshold=1).neighbourhood(6) == (6,)


# -- bad shares ----------------------------------------------------------------------------


def _flip(ciphertext: bytes, at: int = 30) -> bytes:
    return ciphertext[:at] + bytes([ciphertext[at] ^ 0x80]) + ciphertext[at + 1 :]


def test_unusable_routed_shares_are_recorded_and_the_round_still_sums() -> None:
    r = Round(14, 7, 4, seed=8)
    victim = 0
    first, second = r.inbox[victim][0], r.inbox[victim][1]
    outsider = next(v for v in range(14) if v not in r.roster.neighbourhood(victim))
    r.inbox[victim][0] = replace(first, ciphertext=_flip(first.ciphertext))
    r.inbox[victim][1] = replace(second, ciphertext=second.ciphertext[:-1])
    r.inbox[victim].append(replace(first, sender=outsider))
    r.inbox[victim].append(first)  # a repeat

    total, expected = r.finish()

    np.testing.assert_array_equal(total, expected)
    rejected = r.sessions[victim].rejected_shares
    assert set(rejected) == {first.sender, second.sender, outsider}
    assert "do not decrypt" in rejected[first.sender] or "twice" in rejected[first.sender]
    assert "92 bytes, were 91" in rejected[second.sender]
    assert "not a neighbour" in rejected[outsider]
    # Both neighbours whose shares did not open are on its receipt: their pairs are cut.
    assert r.sessions[victim].receipt() == tuple(sorted({first.sender, second.sender}))
    assert not {first.sender, second.sender} & set(r.sessions[victim].masked_with)
    assert (min(victim, first.sender), max(victim, first.sender)) in r.cuts


def test_shares_addressed_to_another_client_are_refused() -> None:
    r = Round(10, 5, 3)
    with pytest.raises(SecureProtocolError, match="addressed to client 1 were given to client 0"):
        r.sessions[0].on_shares(Shares(1, tuple(r.inbox[1])))


# -- the roster ----------------------------------------------------------------------------


def _entries(r: Round) -> list[RosterEntry]:
    return list(r.roster.entries)


def test_a_roster_without_this_client_is_refused() -> None:
    r = Round(10, 5, 3)
    stranger = _unchecked(JOB_ID, ROUND, SESSION, SeededRandomness(99))
    with pytest.raises(SecureProtocolError, match="lists this client's encryption public key 0"):
        stranger.on_roster(r.roster)


@pytest.mark.parametrize(
    "field", ["mask_public_key", "self_mask_commitment", "signing_public_key"]
)
def test_a_roster_with_another_key_for_this_client_is_refused(field: str) -> None:
    # As Java's ClientSession.ownIndex: the signing key too, or a server could sign survivor
    # statements in this client's name.
    r = Round(10, 5, 3)
    entries = _entries(r)
    entries[4] = replace(entries[4], **{field: getattr(entries[5], field)})
    fresh = _unchecked(JOB_ID, ROUND, SESSION, SeededRandomness(4))  # client 4's keys again
    with pytest.raises(
        SecureProtocolError,
        match="roster entry 4 has this client's encryption key but other keys",
    ):
        fresh.on_roster(replace(r.roster, entries=tuple(entries)))


_ORDER_8_POINT = bytes.fromhex("26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05")

_NO_SUBGROUP_POINTS = {
    # Points of small order: the identity (order 1), (0, -1) (order 2), (sqrt(-1), 0) (order 4,
    # also with its sign bit set) and one of order 8. A peer's key among them would make the
    # Diffie-Hellman secret one of 8 values anybody can compute.
    "identity": bytes([1]) + bytes(31),
    "order 2": bytes.fromhex("ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f"),
    "order 4": bytes(32),
    "order 4, sign bit set": bytes(31) + bytes([0x80]),
    "order 8": _ORDER_8_POINT,
    # A non-canonical encoding (y = p, i.e. y = 0 again) and the identity with the sign bit set.
    "non-canonical": bytes.fromhex(
        "edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f"
    ),
    "non-canonical identity": bytes([1]) + bytes(30) + bytes([0x80]),
    # No point at all: y = 2 has no x on the curve.
    "not on the curve": bytes([2]) + bytes(31),
    # On the curve but outside the prime-order subgroup: B plus the point of order 8.
    "mixed order": group.plus(group.base_times(1), _ORDER_8_POINT),
}
"""Keys a neighbour's roster entry must not carry as its mask key or self-mask commitment:
every one is refused by ``group.is_valid`` (libsodium's ``crypto_core_ed25519_is_valid_point``)."""


@pytest.mark.parametrize("field", ["mask_public_key", "self_mask_commitment"])
@pytest.mark.parametrize("point", list(_NO_SUBGROUP_POINTS), ids=str)
def test_a_neighbour_whose_key_is_no_point_of_the_prime_order_subgroup_is_refused(
    field: str, point: str
) -> None:
    bad = _NO_SUBGROUP_POINTS[point]
    assert not group.is_valid(bad)
    r = Round(10, 5, 3)
    # Every other client's key replaced, on the ring the job derives from these keys.
    entries = [e if v == 0 else replace(e, **{field: bad}) for v, e in enumerate(_entries(r))]
    altered = _with_derived_ring(replace(r.roster, entries=tuple(entries)))
    fresh = _unchecked(JOB_ID, ROUND, SESSION, SeededRandomness(0))
    name = "mask public key" if field == "mask_public_key" else "self-mask commitment"
    with pytest.raises(
        SecureProtocolError,
        match=rf"roster entry \d+: its {name} is no point of edwards25519's prime-order subgroup",
    ):
        fresh.on_roster(altered)


def test_a_neighbour_whose_mask_key_is_any_point_of_the_subgroup_is_taken() -> None:
    # The check refuses what is no key, not keys it did not expect: a valid point passes it.
    r = Round(10, 5, 3)
    entries = _entries(r)
    neighbour = next(v for v in r.roster.neighbourhood(0) if v != 0)
    entries[neighbour] = replace(entries[neighbour], mask_public_key=group.base_times(12345))
    altered = _with_derived_ring(replace(r.roster, entries=tuple(entries)))
    fresh = _unchecked(JOB_ID, ROUND, SESSION, SeededRandomness(0))
    assert len(fresh.on_roster(altered)) == 4


def _with_derived_ring(roster: Roster) -> Roster:
    triples = [
        (e.encryption_public_key, e.mask_public_key, e.self_mask_commitment)
        for e in roster.entries
    ]
    context = round_context(JOB_ID, ROUND, SESSION)
    return replace(roster, permutation=tuple(roster_permutation(context, triples)))


def test_a_sparse_roster_whose_ring_the_keys_do_not_derive_is_refused() -> None:
    r = Round(10, 5, 3)
    p = list(r.roster.permutation)
    p[0], p[1] = p[1], p[0]
    fresh = _unchecked(JOB_ID, ROUND, SESSION, SeededRandomness(0))
    with pytest.raises(SecureProtocolError, match="permutation is not the one its keys derive"):
        fresh.on_roster(replace(r.roster, permutation=tuple(p)))


def test_no_masked_input_goes_out_with_fewer_than_t_minus_one_routed_shares() -> None:
    # A job that routes a client no shares would leave the self-mask alone over its update.
    r = Round(10, 5, 3)
    session = r.sessions[0]
    session.on_shares(Shares(0, ()))
    session.on_confirmed([0], [])
    with pytest.raises(SecureProtocolError, match="only 0 confirmed partners"):
        session.masked_input(np.zeros(D, dtype=np.int64))


def test_a_confirmed_message_that_would_mask_without_a_share_or_with_a_stranger_is_refused() -> None:
    r = Round(10, 5, 3)
    me = 0
    routed = list(r.inbox[me])
    junk, unrouted = routed[0].sender, routed[1].sender
    routed[0] = replace(routed[0], ciphertext=_flip(routed[0].ciphertext))
    del routed[1]
    session = r.sessions[me]
    session.on_shares(Shares(me, tuple(routed)))
    assert session.receipt() == (junk,)
    everyone = list(range(10))
    without_unrouted = [v for v in everyone if v != unrouted]
    with pytest.raises(SecureProtocolError, match=f"confirms neighbour {junk}, whose share did not"):
        session.on_confirmed(without_unrouted, [])
    with pytest.raises(SecureProtocolError, match=f"confirms neighbour {unrouted}, whose shares were"):
        session.on_confirmed(everyone, [(me, junk)])
    with pytest.raises(SecureProtocolError, match=r"this client \(0\) was not confirmed"):
        session.on_confirmed(range(1, 10), [])
    with pytest.raises(SecureProtocolError, match="a cut must be two distinct roster indices"):
        session.on_confirmed(everyone, [(me, me)])
    session.on_confirmed(without_unrouted, [(junk, me)])
    assert junk not in session.masked_with and unrouted not in session.masked_with
    assert len(session.masked_input(np.zeros(D, dtype=np.int64))) == D


@pytest.mark.parametrize(
    "change, message",
    [
        ({"degree": 4}, "degree must be odd and in \\[1, 10\\), or 10 \\(the complete graph\\)"),
        ({"degree": 11}, "degree must be odd and in \\[1, 10\\), or 10"),
        ({"threshold": 6}, "threshold must be in \\[1, degree = 5\\], was 6"),
        ({"threshold": 0}, "threshold must be in"),
        ({"permutation": (0,) * 10}, "permutation must hold each index 0..9 once"),
        ({"entries": ()}, "lists no client"),
    ],
)
def test_a_malformed_roster_is_refused(change: dict, message: str) -> None:
    r = Round(10, 5, 3)
    with pytest.raises(SecureProtocolError, match=message):
        replace(r.roster, **change)


# -- the guards ----------------------------------------------------------------------------


def _masked(r: Round, clients: Collection[int]) -> dict[int, np.ndarray]:
    x = r.updates()
    out = {}
    r.confirm()
    for u in r.confirmed:
        if u in clients:
            out[u] = r.sessions[u].masked_input(x[u])
    return out


def test_signing_and_unmasking_are_refused_without_a_masked_input() -> None:
    r = Round(10, 5, 3)
    _masked(r, clients=set(range(1, 10)))
    with pytest.raises(UnmaskRefused, match="sent no masked input"):
        r.sessions[0].sign_survivors(range(10), range(10))
    with pytest.raises(UnmaskRefused, match="signed no survivor list"):
        r.sessions[0].unmask({})
    fresh = _unchecked(JOB_ID, ROUND, SESSION)
    with pytest.raises(UnmaskRefused, match="sent no masked input"):
        fresh.sign_survivors(range(10), range(10))
    with pytest.raises(UnmaskRefused, match="signed no survivor list"):
        fresh.unmask({})


def test_unmask_before_signing_is_refused_even_with_the_masked_input_sent() -> None:
    r = Round(10, 5, 3)
    _masked(r, clients=range(10))
    with pytest.raises(UnmaskRefused, match="signed no survivor list"):
        r.sessions[0].unmask({})


def test_signing_is_refused_to_a_client_the_job_says_did_not_survive() -> None:
    r = Round(10, 5, 3)
    _masked(r, clients=range(10))
    with pytest.raises(UnmaskRefused, match=r"this client \(0\) is not among the survivors"):
        r.sessions[0].sign_survivors(range(10), range(1, 10))


def test_signing_is_refused_when_fewer_than_t_of_the_neighbourhood_survived() -> None:
    r = Round(10, 5, 3)
    _masked(r, clients=range(10))
    others = [v for v in r.roster.neighbourhood(0) if v != 0]
    survivors = set(range(10)) - set(others[:3])  # itself and one neighbour: 2 < t = 3
    message = "only 2 of this client's neighbourhood of 5 .* threshold 3"
    with pytest.raises(UnmaskRefused, match=message):
        r.sessions[0].sign_survivors(range(10), survivors)
    survivors = set(range(10)) - set(others[:2])  # exactly t
    assert len(r.sessions[0].sign_survivors(range(10), survivors)) == 64


def test_signing_is_refused_when_masked_inputs_came_from_clients_that_did_not_share() -> None:
    r = Round(10, 5, 3, drop_at_share={7})
    _masked(r, clients=range(10))
    u2 = set(range(10)) - {7}
    with pytest.raises(UnmaskRefused, match=r"clients \[7\] sent a masked input but are not among"):
        r.sessions[0].sign_survivors(u2, range(10))
    with pytest.raises(UnmaskRefused, match=r"survivors \[10\] are not roster indices"):
        r.sessions[0].sign_survivors(range(11), range(10))
    with pytest.raises(UnmaskRefused, match="repeats an index"):
        r.sessions[0].sign_survivors([*u2, 0], u2)


def test_signing_is_refused_when_u2_disagrees_with_the_confirmed_clients() -> None:
    r = Round(10, 5, 3, drop_at_share={0})
    u = next(v for v in r.roster.neighbourhood(0) if v != 0)
    other = next(v for v in r.roster.neighbourhood(u) if v not in (0, u))
    _masked(r, clients=range(1, 10))
    with pytest.raises(UnmaskRefused, match=r"U2 includes \[0\] that it did not confirm"):
        r.sessions[u].sign_survivors(range(10), range(1, 10))
    everyone_but_0 = set(range(1, 10))
    with pytest.raises(UnmaskRefused, match=rf"omits \[{other}\] that it did"):
        r.sessions[u].sign_survivors(everyone_but_0 - {other}, everyone_but_0 - {other})
    assert len(r.sessions[u].sign_survivors(everyone_but_0, everyone_but_0)) == 64


def test_unmask_repeats_its_shares_and_signing_its_signature() -> None:
    r = Round(10, 5, 3)
    masked = _masked(r, clients=range(10))
    first = r.sign_and_unmask(masked)
    signatures = {u: r.sessions[u].sign_survivors(range(10), range(10)) for u in range(10)}
    for u in range(10):
        assert r.sessions[u].unmask(signatures) == first[u]
        assert isinstance(first[u], UnmaskShares)


def test_a_session_sends_one_masked_input_and_runs_its_phases_in_order() -> None:
    r = Round(10, 5, 3)
    session = r.sessions[0]
    with pytest.raises(SessionStateError, match="on_roster was already called"):
        session.on_roster(r.roster)
    x = r.updates()[0]
    with pytest.raises(SessionStateError, match="needs phase 4 before it masks its input"):
        session.masked_input(x)
    session.on_shares(Shares(0, tuple(r.inbox[0])))
    with pytest.raises(SessionStateError, match="called once per session"):
        session.on_shares(Shares(0, tuple(r.inbox[0])))
    with pytest.raises(SessionStateError, match="needs phase 4 before it masks its input"):
        session.masked_input(x)
    session.on_confirmed(range(10), [])
    with pytest.raises(SessionStateError, match="needs on_shares first, and is called once"):
        session.on_confirmed(range(10), [])
    session.masked_input(x)
    with pytest.raises(SessionStateError, match="one masked input, and this one already did"):
        session.masked_input(x)
    with pytest.raises(SessionStateError, match="needs phase 6 before its survivor statement"):
        _ = session.statement
    fresh = _unchecked(JOB_ID, ROUND, SESSION)
    with pytest.raises(SessionStateError, match="needs phase 2 before its roster index is known"):
        _ = fresh.index


def test_sealed_shares_go_to_each_other_neighbour_in_index_order() -> None:
    r = Round(12, 7, 4)
    fresh = _unchecked(JOB_ID, ROUND, SESSION, SeededRandomness(2))  # client 2's keys again
    sealed = fresh.on_roster(r.roster)
    assert [s.index for s in sealed] == list(fresh.neighbours)
    assert len(sealed) == 6 and 2 not in fresh.neighbours
    # 12 bytes of nonce, the two 32-byte shares and a 16-byte tag.
    assert all(isinstance(s, EncryptedShare) and len(s.ciphertext) == 92 for s in sealed)
    # And the Feldman commitments to both polynomials: t - 1 points each.
    assert len(fresh.commitments) == 2 * (4 - 1) * 32


def test_a_roster_of_size_n_is_the_complete_graph_whatever_n_s_parity() -> None:
    for n in (2, 3, 4, 6):
        roster = replace(Round(n, 1, 1).roster, degree=n, threshold=n)
        for node in range(n):
            assert roster.neighbourhood(node) == tuple(range(n))
