"""The secure noise generators (privagg_client.privacy.randomness), checked statistically with
fixed seeds: each bound is 5 standard errors, a false failure rate of about 6e-7 per check."""

from __future__ import annotations

import math

import numpy as np
import pytest

from privagg_client.privacy import randomness

N = 200_000


def test_uniforms_are_in_the_open_unit_interval_and_uniform() -> None:
    u = randomness.uniform(N, randomness.seeded(1))
    assert u.min() > 0 and u.max() < 1
    assert abs(u.mean() - 0.5) < 5 * math.sqrt(1 / 12 / N)
    # The extremes: never exactly 0 or 1, where the logs of the inverse CDFs would be infinite.
    assert randomness.uniform(1, lambda n: b"\x00" * n)[0] == 0.5 * 2.0**-52
    assert randomness.uniform(1, lambda n: b"\xff" * n)[0] == 1 - 2.0**-53


def test_normal_has_the_stated_std() -> None:
    x = randomness.normal(N + 1, 2.5, randomness.seeded(2))
    assert len(x) == N + 1
    assert abs(x.mean()) < 5 * 2.5 / math.sqrt(N)
    assert abs(x.std() - 2.5) < 5 * 2.5 / math.sqrt(2 * N)
    # A Gaussian's fourth moment is 3 sigma^4: Box-Muller's output is no uniform in disguise.
    kurtosis = float(np.mean(x**4) / x.var() ** 2)
    assert abs(kurtosis - 3) < 5 * math.sqrt(96 / N)


def test_laplace_mean_absolute_deviation_is_its_scale() -> None:
    x = randomness.laplace(N, 0.7, randomness.seeded(3))
    assert abs(np.abs(x).mean() - 0.7) < 5 * 0.7 / math.sqrt(N)  # |X| ~ Exp(scale)
    assert abs(x.mean()) < 5 * 0.7 * math.sqrt(2 / N)


def test_gumbel_mean_is_euler_gamma_times_its_scale() -> None:
    x = randomness.gumbel(N, 1.5, randomness.seeded(4))
    euler = 0.5772156649015329
    std = 1.5 * math.pi / math.sqrt(6)
    assert abs(x.mean() - euler * 1.5) < 5 * std / math.sqrt(N)


def test_the_system_source_differs_between_calls() -> None:
    assert not np.array_equal(randomness.normal(8), randomness.normal(8))


def test_the_two_halves_of_a_normal_draw_are_independent() -> None:
    # Box-Muller's cos and sin outputs of one pair are independent; were one reused, the noise
    # of the first half would cancel against the second. Correlation's std is 1 / sqrt(n).
    x = randomness.normal(N, 1.0, randomness.seeded(5))
    half = N // 2
    correlation = float(np.corrcoef(x[:half], x[half:])[0, 1])
    assert abs(correlation) < 5 / math.sqrt(half)
    assert abs(float(np.corrcoef(np.abs(x[:half]), np.abs(x[half:]))[0, 1])) < 5 / math.sqrt(half)


def test_gumbel_follows_its_cdf_on_both_branches() -> None:
    # P(G <= g) = exp(-exp(-g / scale)); the draw switches branch at the median, so check both
    # sides and the tails. Each proportion's std is sqrt(p (1 - p) / N).
    x = randomness.gumbel(N, 2.0, randomness.seeded(6))
    for g in (-3.0, -1.0, 0.0, 0.7330, 2.0, 6.0, 12.0):
        p = math.exp(-math.exp(-g / 2.0))
        assert abs(float(np.mean(x <= g)) - p) < 5 * math.sqrt(p * (1 - p) / N) + 1e-12, g


def test_the_tails_reach_2_to_the_minus_118() -> None:
    zeros = lambda n: b"\x00" * n  # noqa: E731 - every fine uniform at its smallest
    assert randomness.normal(1, 1.0, zeros)[0] == pytest.approx(math.sqrt(2 * 118 * math.log(2)))
    assert abs(randomness.laplace(1, 1.0, zeros)[0]) == pytest.approx(118 * math.log(2))
    lowest = -math.log(math.log(2) + 118 * math.log(2))
    assert randomness.gumbel(1, 1.0, zeros)[0] == pytest.approx(lowest)
    # The Gumbel's upper tail: the coin says "below the median" and w is at its smallest.
    coin_up = iter([b"\xff" * 8, b"\x00" * 16])
    upper = randomness.gumbel(1, 1.0, lambda n: next(coin_up))[0]
    assert upper == pytest.approx(-math.log(2.0**-119), rel=1e-3)
    assert randomness.sampler_delta(0.0, 1) == 2 * 2.0**-118
