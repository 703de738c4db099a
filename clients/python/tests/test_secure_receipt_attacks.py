"""The adversarial review of the receipt phase (issue 32): a lying server's fabricated cuts."""

from __future__ import annotations

import pytest

from privagg_client import SecureProtocolError, UnmaskRefused
from privagg_client.secure import ClientSession, RoutedShare, Shares
from privagg_client.secure.primitives import round_context
from privagg_client.secure.thresholds import ThreatModel
from secagg_server import SeededRandomness, make_roster

from test_secure_session import Round


def test_a_target_cut_from_all_but_t_minus_1_partners_refuses_to_unmask_when_those_drop() -> None:
    """One Confirmed for everyone cuts client 0 from neighbours 3 and 4 (no receipt asked for it);
    one survivor list drops 0's only partners 1 and 2. Every other guard passes (3 of 0's
    neighbourhood are in U3, t = 3), so 0 and its cut neighbours would reveal the shares of 0's
    self-mask seed while 0's holders reveal the mask keys of 1 and 2: the job strips 0's masked
    input to its update. The Java test ReceiptPhaseAttackTest recovers it; here the partners'
    guard refuses to sign that list (phase 5), so 0 reveals nothing."""
    r = Round(5, 5, 3)
    for u in range(5):
        r.sessions[u].on_shares(Shares(u, tuple(r.inbox[u])))
        assert r.sessions[u].receipt() == ()
    cuts = {(0, 3), (0, 4)}
    for u in range(5):
        r.sessions[u].on_confirmed(range(5), cuts)
    assert r.sessions[0].masked_with == (1, 2)
    x = r.updates()
    for u in range(5):
        r.sessions[u].masked_input(x[u])
    with pytest.raises(UnmaskRefused):
        r.sessions[0].sign_survivors(range(5), [0, 3, 4])


def test_a_confirmed_cutting_more_than_r_pairs_a_client_did_not_reject_is_refused() -> None:
    # 12 clients at the default rates: k = 9, t = 6, r = 1 (one colluder may falsely complain).
    threat = ThreatModel(0.1, 0.1)
    sessions = [
        ClientSession("job", 3, bytes(16), SeededRandomness(u), threat) for u in range(12)
    ]
    roster = make_roster(
        [s.advertise() for s in sessions], 9, 6, round_context("job", 3, bytes(16))
    )
    inbox: dict[int, list[RoutedShare]] = {v: [] for v in range(12)}
    for u, s in enumerate(sessions):
        for sealed in s.on_roster(roster):
            inbox[sealed.index].append(RoutedShare(u, sealed.ciphertext))
    me = sessions[0]
    me.on_shares(Shares(0, tuple(inbox[0])))
    a, b = (v for v in me.neighbours[:2])
    with pytest.raises(SecureProtocolError, match="cuts 2 of this client's pairs, more than the 1"):
        me.on_confirmed(range(12), [(0, a), (0, b)])
    with pytest.raises(SecureProtocolError, match="the cuts repeat the pair"):
        me.on_confirmed(range(12), [(0, a), (a, 0)])
    me.on_confirmed(range(12), [(0, a)])
    assert a not in me.masked_with and b in me.masked_with
