"""The adversarial review of the receipt phase (issue 32): a lying server's fabricated cuts; and
a dealer's shares off the polynomial its Feldman commitments state, rejected on the receipt."""

from __future__ import annotations

import random
from dataclasses import replace

import numpy as np
import pytest

from privagg_client import SecureProtocolError, UnmaskRefused
from privagg_client.secure import ClientSession, RoutedShare, Shares, group, shamir
from privagg_client.secure.primitives import (
    decrypt_shares,
    encrypt_shares,
    round_context,
    share_encryption_key,
    x25519_public_key,
)
from privagg_client.secure.thresholds import ThreatModel
from secagg_server import SeededRandomness, make_roster

from test_secure_session import JOB_ID, ROUND, SESSION, Round


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


def test_a_confirmed_cutting_more_than_r_plus_one_pairs_a_client_did_not_reject_is_refused() -> None:
    # 12 clients at the default rates: k = 9, t = 6, r = 1 (one colluder may falsely complain,
    # and one client more: the client two neighbouring worlds differ by).
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
    me.on_shares(Shares(0, tuple(inbox[0])))
    a, b, c = (v for v in me.neighbours[:3])
    with pytest.raises(SecureProtocolError, match="cuts 3 of this client's pairs, more than the 2"):
        me.on_confirmed(range(12), [(0, a), (0, b), (0, c)])
    with pytest.raises(SecureProtocolError, match="the cuts repeat the pair"):
        me.on_confirmed(range(12), [(0, a), (a, 0)])
    me.on_confirmed(range(12), [(0, a), (0, b)])
    assert a not in me.masked_with and b not in me.masked_with and c in me.masked_with


# -- shares off the committed polynomial -----------------------------------------------------


def _reseal_off_the_polynomial(
    r: Round, dealer: int, holder: int, part: str, other_secret: bool
) -> tuple[int, int, bytes]:
    """Replaces what ``dealer`` sealed for ``holder`` (routed with the dealer's genuine
    commitments) by a pair that decrypts and holds two scalars below l, one of which (``part``:
    "mask key" or "self-mask seed") is off the polynomial those commitments state: the share at
    x of ``f + g``, with f the dealer's polynomial and g a random one whose constant term is 0
    (another polynomial through the same secret) or not (a consistent sharing of another secret).
    Checks the substitute is on the commitments of ``f + g`` (a share of a consistent sharing)
    and returns the honest and the substituted share and the dealer's genuine commitments routed
    with it. A colluding dealer can do this: it knows its encryption key (the first 32 bytes its
    seeded randomness drew)."""
    ctx = round_context(JOB_ID, ROUND, SESSION)
    c_sk = random.Random(1000 * r.seed + dealer).randbytes(32)
    assert x25519_public_key(c_sk) == r.roster.entries[dealer].encryption_public_key
    key = share_encryption_key(
        ctx, c_sk, r.roster.entries[holder].encryption_public_key, dealer, holder
    )
    digest = r.roster.digest(ctx)
    at = next(i for i, s in enumerate(r.inbox[holder]) if s.sender == dealer)
    routed = r.inbox[holder][at]
    plaintext = decrypt_shares(key, ctx, dealer, holder, digest, routed.ciphertext)
    half = shamir.SHARE_BYTES
    pair = [shamir.share_from_bytes(plaintext[:half]), shamir.share_from_bytes(plaintext[half:])]
    which = 0 if part == "mask key" else 1
    t, x = r.roster.threshold, holder + 1
    rng = random.Random(7)
    g0 = 1 + rng.randrange(group.ORDER - 1) if other_secret else 0
    g = [1 + rng.randrange(group.ORDER - 1) for _ in range(t - 1)]
    honest = pair[which]
    pair[which] = (honest + shamir.evaluate(g0, g, x)) % group.ORDER
    sealed = encrypt_shares(
        key, ctx, dealer, holder, digest, b"".join(shamir.share_to_bytes(s) for s in pair)
    )
    r.inbox[holder][at] = replace(routed, ciphertext=sealed)
    # The commitments of f + g: C_j + g_j B (and C_0 + g0 B).
    size = group.commitment_bytes(t)
    committed = routed.commitments[which * size : (which + 1) * size]
    entry = r.roster.entries[dealer]
    constant = entry.mask_public_key if which == 0 else entry.self_mask_commitment
    if g0:
        constant = group.plus(constant, group.base_times(g0))
    moved = b"".join(
        group.plus(committed[32 * j : 32 * (j + 1)], group.base_times(g[j])) for j in range(t - 1)
    )
    assert group.verifies(constant, moved, t, x, shamir.share_to_bytes(pair[which]))
    return honest, pair[which], routed.commitments


@pytest.mark.parametrize("part", ["mask key", "self-mask seed"])
@pytest.mark.parametrize(
    "other_secret", [True, False], ids=["another secret", "another polynomial, same secret"]
)
def test_a_share_off_the_committed_polynomial_puts_its_dealer_on_the_holders_receipt(
    part: str, other_secret: bool
) -> None:
    """Feldman's check before the receipt: a dealer that hands one holder a share which decrypts
    and is a valid scalar, but is not on the polynomial its commitments state, is rejected by that
    holder in phase 3, exactly like a share that does not decrypt (so the job cuts the pair, and
    no mask depends on the share); a holder that got its honest share keeps the dealer."""
    r = Round(10, 5, 3, seed=21)
    dealer = 4
    victim, honest_holder = [v for v in r.roster.neighbourhood(dealer) if v != dealer][:2]
    honest, substitute, commitments = _reseal_off_the_polynomial(
        r, dealer, victim, part, other_secret
    )
    assert substitute != honest and 0 <= substitute < group.ORDER
    assert len(commitments) == 2 * group.commitment_bytes(3)

    total, expected = r.finish()

    held_off = r.sessions[victim]
    assert held_off.receipt() == (dealer,)
    assert set(held_off.rejected_shares) == {dealer}
    assert (
        f"the share of the sender's {part} is not on the polynomial its commitments state"
        in held_off.rejected_shares[dealer]
    )
    assert dealer not in held_off.masked_with
    assert (min(dealer, victim), max(dealer, victim)) in r.cuts
    # The holder with the honest share does not complain, and masks with the dealer.
    held_honest = r.sessions[honest_holder]
    assert held_honest.receipt() == () and held_honest.rejected_shares == {}
    assert dealer in held_honest.masked_with
    # Nobody else rejected anything, and the round still sums exactly.
    assert r.cuts == {(min(dealer, victim), max(dealer, victim))}
    np.testing.assert_array_equal(total, expected)
