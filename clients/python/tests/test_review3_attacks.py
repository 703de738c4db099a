"""Adversarial review of the receipt phase (review3): a lying server's fabricated cuts."""

from __future__ import annotations

import pytest

from privagg_client import UnmaskRefused
from privagg_client.secure import Shares

from test_secure_session import Round


def test_a_target_cut_from_all_but_t_minus_1_partners_refuses_to_unmask_when_those_drop() -> None:
    """One Confirmed for everyone cuts client 0 from neighbours 3 and 4 (no receipt asked for it);
    one survivor list drops 0's only partners 1 and 2. Every guard passes (3 of 0's neighbourhood
    are in U3, t = 3), so 0 and its cut neighbours reveal the shares of 0's self-mask seed while
    0's holders reveal the mask keys of 1 and 2: the job strips 0's masked input to its update.
    The Java test ReceiptPhaseAttackTest recovers it; here the guard should refuse."""
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
        r.sessions[0].unmask(range(5), [0, 3, 4])
