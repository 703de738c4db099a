"""A lying server that shows different clients rosters of different sizes (Java
``RosterEquivocationAttackTest``): each roster built of genuine advertisements, each with the
(k, t) the job's rates give its size, so each group of clients would count survivor signatures
against its own T. Every share is sealed under the digest of its dealer's roster, so a holder
shown the other roster cannot open it: the groups hold nothing of each other."""

from __future__ import annotations

from privagg_client.secure import ClientSession, Roster, RoutedShare, Shares
from privagg_client.secure.primitives import round_context
from privagg_client.secure.thresholds import ThreatModel, check_graph, signature_threshold
from secagg_server import SeededRandomness, make_roster

JOB_ID = "equivocation-job"
ROUND = 5
SESSION = bytes(16)
CONTEXT = round_context(JOB_ID, ROUND, SESSION)
RATES = ThreatModel(0.1, 0.3)
SMALL, LARGE = 12, 17


def test_clients_shown_rosters_of_different_sizes_reject_each_others_shares() -> None:
    # The job's choice for each size at these rates: the complete graph, t = 7 and t = 10.
    check_graph(SMALL, SMALL, 7, RATES)
    check_graph(LARGE, LARGE, 10, RATES)
    assert signature_threshold(SMALL, RATES) == 7 and signature_threshold(LARGE, RATES) == 10
    sessions = [
        ClientSession(JOB_ID, ROUND, SESSION, SeededRandomness(55 + u), RATES)
        for u in range(LARGE)
    ]
    keys = [s.advertise() for s in sessions]
    small = make_roster(keys[:SMALL], SMALL, 7, CONTEXT)
    large = make_roster(keys, LARGE, 10, CONTEXT)
    assert small.entries == large.entries[:SMALL]  # indices and keys agree
    assert small.digest(CONTEXT) != large.digest(CONTEXT)
    shown: dict[int, Roster] = {u: small if u < 7 else large for u in range(LARGE)}
    sent = {u: sessions[u].on_roster(shown[u]) for u in range(LARGE)}
    # Each recipient is routed the shares addressed to it by the members of its roster.
    for v in range(LARGE):
        n = len(shown[v].entries)
        routed = tuple(
            RoutedShare(u, share.ciphertext, sessions[u].commitments)
            for u in range(n)
            for share in sent[u]
            if share.index == v
        )
        sessions[v].on_shares(Shares(v, routed))
        other_group = sorted(r.sender for r in routed if shown[r.sender] is not shown[v])
        if v < SMALL:
            assert other_group == (list(range(7, SMALL)) if v < 7 else list(range(7)))
        assert sessions[v].receipt() == tuple(other_group), f"client {v}"
        assert sorted(sessions[v].rejected_shares) == other_group
        # So it holds no share of a client shown the other roster.
        assert not set(sessions[v]._held) & set(other_group)
        assert all("do not decrypt" in sessions[v].rejected_shares[u] for u in other_group)
