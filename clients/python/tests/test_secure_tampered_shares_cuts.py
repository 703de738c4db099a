"""The second adversarial review of issue 32's receipt phase: the server makes a client reject
honest neighbours by tampering the shares it routes, so the cuts that follow are "rejected by the
client itself"; they count against the r + 1 limit of ``on_confirmed`` all the same (Java:
TamperedSharesCutsTest)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from privagg_client import SecureProtocolError
from privagg_client.secure import ClientSession, RoutedShare, Shares
from privagg_client.secure.primitives import round_context
from privagg_client.secure.thresholds import ThreatModel
from secagg_server import SeededRandomness, make_roster


def test_a_confirmed_keeping_a_client_whose_own_receipt_rejects_more_than_r_plus_one_is_refused() -> None:
    # 12 clients at the default rates: k = 9, t = 6, r = 1. The server replaces what three honest
    # neighbours sealed for client 0; its receipt rejects 3 > r + 1, which an honest job answers by
    # removing client 0 as a liar. A Confirmed that keeps it and cuts those pairs is the server's.
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
            inbox[sealed.index].append(RoutedShare(u, sealed.ciphertext, s.commitments))
    me = sessions[0]
    a, b, c = me.neighbours[:3]
    tampered = [
        replace(s, ciphertext=bytes(len(s.ciphertext))) if s.sender in (a, b, c) else s
        for s in inbox[0]
    ]
    me.on_shares(Shares(0, tuple(tampered)))
    assert set(me.receipt()) == {a, b, c}
    with pytest.raises(SecureProtocolError):
        me.on_confirmed(range(12), [(0, a), (0, b), (0, c)])
