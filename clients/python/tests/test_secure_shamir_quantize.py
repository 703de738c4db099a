"""Shamir sharing over the integers mod l (edwards25519's group order) with Feldman's commitments,
and the fixed-point grid: the properties docs/secure-aggregation.md states for them."""

from __future__ import annotations

import itertools
import math
import random

import numpy as np
import pytest

from privagg_client.secure import group, quantize, shamir, to_words
from privagg_client.secure.quantize import units_limit
from privagg_client.secure.shamir import PRIME

# -- Shamir --------------------------------------------------------------------------------


def _sharing(seed: int, threshold: int, holders: int) -> tuple[int, dict[int, int]]:
    rng = random.Random(seed)
    secret = rng.randrange(PRIME)  # a scalar below l, as a mask key or self-mask seed
    coefficients = shamir.random_coefficients(threshold, rng.randrange)
    return secret, shamir.split(secret, coefficients, range(1, holders + 1))


def test_any_t_shares_reconstruct_the_secret() -> None:
    secret, shares = _sharing(1, threshold=4, holders=7)
    for subset in itertools.combinations(sorted(shares), 4):
        assert shamir.reconstruct({x: shares[x] for x in subset}) == secret
    assert shamir.reconstruct(shares) == secret  # more than t shares lie on the same polynomial


def test_a_threshold_of_one_shares_the_secret_itself() -> None:
    assert shamir.split(42, [], [1, 5]) == {1: 42, 5: 42}


def _times(p: list[int], q: list[int]) -> list[int]:
    out = [0] * (len(p) + len(q) - 1)
    for i, a in enumerate(p):
        for j, b in enumerate(q):
            out[i + j] = (out[i + j] + a * b) % PRIME
    return out


def _interpolating_coefficients(points: dict[int, int]) -> list[int]:
    """The coefficients (constant first) of the polynomial of degree < len(points) through them."""
    coefficients = [0] * len(points)
    for xi, yi in points.items():
        basis, denominator = [1], 1
        for xj in points:
            if xj != xi:
                basis = _times(basis, [-xj % PRIME, 1])
                denominator = denominator * (xi - xj) % PRIME
        scale = yi * pow(denominator, -1, PRIME) % PRIME
        coefficients = [(c + scale * b) % PRIME for c, b in zip(coefficients, basis)]
    return coefficients


@pytest.mark.parametrize("threshold", [2, 3, 5])
def test_t_minus_1_shares_are_consistent_with_any_secret(threshold: int) -> None:
    """Perfect secrecy (Shamir 1979): for any t - 1 shares and any other secret there is a
    polynomial of degree t - 1 with that secret as its constant term through those shares,
    so the shares say nothing about which secret was shared. Constructed here by interpolating
    the shares and the point (0, other secret)."""
    secret, shares = _sharing(threshold, threshold, holders=threshold + 2)
    seen = dict(sorted(shares.items())[: threshold - 1])
    for other in (0, (secret + 1) % PRIME, PRIME - 1, random.Random(9).randrange(PRIME)):
        polynomial = _interpolating_coefficients({0: other, **seen})
        assert len(polynomial) == threshold and polynomial[0] == other
        for x, y in seen.items():
            assert shamir.evaluate(other, polynomial[1:], x) == y


def test_the_field_is_the_integers_mod_l() -> None:
    assert PRIME == group.ORDER == 2**252 + 27742317777372353535851937790883648493


def test_shares_are_32_bytes_little_endian_below_l() -> None:
    assert shamir.SHARE_BYTES == 32
    assert shamir.share_to_bytes(1) == b"\x01" + bytes(31)
    assert shamir.share_to_bytes(PRIME - 1)[31] == 0x10  # l < 2^253: the top byte holds 0x10
    assert shamir.share_to_bytes(PRIME - 1) == group.scalar_bytes(PRIME - 1)
    assert shamir.share_from_bytes(shamir.share_to_bytes(12345)) == 12345
    with pytest.raises(ValueError, match="a scalar is 32 bytes, was 31"):
        shamir.share_from_bytes(bytes(31))
    with pytest.raises(ValueError, match="a scalar is 32 bytes, was 33"):
        shamir.share_from_bytes(bytes(33))
    with pytest.raises(ValueError, match="not a scalar below"):
        shamir.share_from_bytes(PRIME.to_bytes(32, "little"))
    with pytest.raises(ValueError, match="not a scalar below"):
        shamir.share_from_bytes(bytes(31) + b"\xff")
    with pytest.raises(ValueError):
        shamir.share_to_bytes(PRIME)


def test_coefficients_are_in_1_to_l_so_each_has_a_commitment() -> None:
    # randbelow at both ends of its range: 0 would have no commitment (the identity).
    assert shamir.random_coefficients(3, lambda n: 0) == [1, 1]
    assert shamir.random_coefficients(3, lambda n: n - 1) == [PRIME - 1, PRIME - 1]
    assert shamir.random_coefficients(1) == []
    coefficients = shamir.random_coefficients(4)
    assert len(coefficients) == 3 and all(1 <= c < PRIME for c in coefficients)
    committed = group.commitments(coefficients)
    assert len(committed) == group.commitment_bytes(4) == 3 * 32
    assert committed[32:64] == group.base_times(coefficients[1])
    with pytest.raises(ValueError, match="threshold must be >= 1"):
        shamir.random_coefficients(0)


@pytest.mark.parametrize("threshold", [1, 2, 3, 5])
def test_every_share_is_on_the_polynomial_its_feldman_commitments_state(threshold: int) -> None:
    """Feldman (FOCS 1987): ``s_x B = C_0 + sum_j x^j C_j`` for the share at x, with C_0 the
    secret's commitment (the mask key or self-mask commitment) and C_j = a_j B."""
    rng = random.Random(40 + threshold)
    secret = 1 + rng.randrange(PRIME - 1)
    coefficients = shamir.random_coefficients(threshold, rng.randrange)
    constant, committed = group.base_times(secret), group.commitments(coefficients)
    shares = shamir.split(secret, coefficients, range(1, 8))
    for x, y in shares.items():
        share = shamir.share_to_bytes(y)
        assert group.verifies(constant, committed, threshold, x, share)
        # Not at another x (with t = 1 every share is the secret), not another value, not under
        # another secret's commitment.
        assert group.verifies(constant, committed, threshold, x % 7 + 1, share) == (threshold == 1)
        assert not group.verifies(
            constant, committed, threshold, x, shamir.share_to_bytes((y + 1) % PRIME)
        )
        assert not group.verifies(group.base_times(secret + 1), committed, threshold, x, share)
        # Malformed commitments or shares fail, and never raise.
        assert not group.verifies(constant, committed + bytes(32), threshold, x, share)
        assert not group.verifies(constant, committed, threshold, x, share[:31])
        assert not group.verifies(constant, committed, threshold, 0, share)
    if threshold > 1:
        # Another polynomial through the same secret: its shares are off these commitments.
        other = shamir.split(secret, shamir.random_coefficients(threshold, rng.randrange), [3])
        assert other[3] != shares[3]
        assert not group.verifies(
            constant, committed, threshold, 3, shamir.share_to_bytes(other[3])
        )
        # A commitment that is no point of the subgroup (here: all zero, of order 4) fails.
        zeroed = bytes(32) + committed[32:]
        assert not group.verifies(constant, zeroed, threshold, 1, shamir.share_to_bytes(shares[1]))


def test_evaluation_is_the_polynomial_mod_p() -> None:
    coefficients = [PRIME - 1, 3, 2**300]
    x = 17
    expected = (5 + (PRIME - 1) * x + 3 * x**2 + 2**300 * x**3) % PRIME
    assert shamir.evaluate(5, coefficients, x) == expected
    with pytest.raises(ValueError, match=r"x must be in \(0, p\)"):
        shamir.split(5, coefficients, [0])


# -- quantization --------------------------------------------------------------------------


@pytest.mark.parametrize("clip_norm", [4.0, 3.0, 0.1])
def test_values_on_the_grid_are_unchanged(clip_norm: float) -> None:
    units = np.array([0, 1, -1, 12345, -987654, 2**20])
    values = units * clip_norm / 2.0**36
    # a = v 2^36 / C must come back exactly for these C: check the premise, then quantize.
    assert (values * 2.0**36 / clip_norm == units).all()
    x = quantize(values, clip_norm, np.random.default_rng(0))
    assert x.dtype == np.int64 and x.tolist() == units.tolist()


def test_rounding_is_unbiased() -> None:
    """Each coordinate rounds up with probability frac(a): with N = 200000 draws per value the
    mean's standard deviation is at most 0.5 / sqrt(N) = 0.0011; the test allows 6 of them
    (0.0067 units), a false-failure probability below 2e-9 per value (fixed seed)."""
    clip_norm = 1.0
    n = 200_000
    for a in (0.3, -1.75, 2.5, 7.999):
        values = np.full(n, a / 2.0**36)  # norm sqrt(n) a 2^-36: far inside the clip bound
        x = quantize(values, clip_norm, np.random.default_rng(20240501))
        assert set(np.unique(x).tolist()) <= {math.floor(a), math.floor(a) + 1}
        assert abs(x.mean() - a) < 6 * 0.5 / math.sqrt(n), a


class _AlwaysUp:
    """A stand-in generator whose draws are all 0: every off-grid value rounds up."""

    def random(self, n: int) -> np.ndarray:
        return np.zeros(n)


@pytest.mark.parametrize("d", [1, 10, 1000, 4097])
def test_the_quantized_norm_is_at_most_c_in_units_even_when_every_value_rounds_up(d: int) -> None:
    """Clipped to C' = C (1 - sqrt(d) 2^-36), each coordinate of a then moves by less than one
    unit, so ||x|| <= 2^36 units; checked exactly in integers, for an update far above the clip
    norm pointing along the diagonal, where rounding up adds the most."""
    clip_norm = 2.0
    values = np.full(d, 10.0)
    x = quantize(values, clip_norm, _AlwaysUp())  # type: ignore[arg-type]
    assert sum(int(v) ** 2 for v in x) <= 2**72
    assert units_limit(d) <= 2.0**36 - math.sqrt(d)  # C' in units, less the margin
    random_values = np.random.default_rng(d).normal(size=d) * 100
    x = quantize(random_values, clip_norm, np.random.default_rng(d + 1))
    assert sum(int(v) ** 2 for v in x) <= 2**72


def test_an_update_inside_the_bound_is_not_scaled() -> None:
    values = np.array([0.25, -0.5])
    x = quantize(values, 1.0, np.random.default_rng(0))
    assert x.tolist() == [2**34, -(2**35)]
    assert quantize(np.zeros(3), 1.0).tolist() == [0, 0, 0]


def test_huge_values_are_clipped_without_overflow() -> None:
    values = np.array([1e300, -1e300, 3e299])
    x = quantize(values, 1.0, np.random.default_rng(0))
    assert sum(int(v) ** 2 for v in x) <= 2**72 and x[0] > 2**35 and x[1] < -(2**35)


def test_negative_values_become_twos_complement_words() -> None:
    assert to_words(np.array([-1, 0, 5], dtype=np.int64)).tolist() == [2**64 - 1, 0, 5]


@pytest.mark.parametrize(
    "values, clip_norm, message",
    [
        ([np.nan], 1.0, "only finite values"),
        ([1.0], 0.0, "clipNorm must be > 0 and finite, was 0.0"),
        ([1.0], float("nan"), "clipNorm must be > 0 and finite, was nan"),
        ([], 1.0, "needs at least one value"),
    ],
)
def test_quantize_refuses_bad_input(values: list[float], clip_norm: float, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        quantize(values, clip_norm)
