"""Privacy accounting for what a client adds itself: pure math, no torch, no Kafka.

The sampled Gaussian's Renyi DP (Mironov, Talwar, Zhang 2019), converted to (epsilon, delta) with
Balle et al. 2020, Theorem 21, over the same orders as the job's Java accountant
(``dev.privagg.privacy.RdpAccountant``), so both give the same epsilon for the same parameters;
and the exact (epsilon, delta) curve of a plain Gaussian (Balle and Wang 2018, Theorem 8), with
which a composition of k equal Gaussians is one Gaussian of noise multiplier z / sqrt(k).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

from .checks import require as _require

DEFAULT_ORDERS: tuple[float, ...] = (
    tuple(t / 10 for t in range(11, 110))
    + tuple(float(o) for o in range(11, 64))
    + (128.0, 256.0, 512.0, 1024.0)
)
"""Orders 1.1 to 10.9 by 0.1, 11 to 63, then 128 to 1024: the Java accountant's."""

_SERIES_CUTOFF = -30.0  # terms below exp(-30) no longer change A_alpha in double
_MAX_SERIES_TERMS = 100_000


def _log_add(a: float, b: float) -> float:
    hi, lo = max(a, b), min(a, b)
    if hi == -math.inf:
        return hi
    return hi + math.log1p(math.exp(lo - hi))


def _log_sub(a: float, b: float) -> float:
    if b == -math.inf:
        return a
    if a == b:
        return -math.inf
    return a + math.log(-math.expm1(b - a))


def _log_erfc(x: float) -> float:
    """log(erfc(x)), by an asymptotic series where erfc underflows (x > 25)."""
    if x <= 25:
        return math.log(math.erfc(x))
    # erfc(x) = exp(-x^2) / (x sqrt(pi)) (1 - 1/(2x^2) + 3/(4x^4) - 15/(8x^6) + 105/(16x^8))
    u = 1 / (2 * x * x)
    series = 1 - u + 3 * u * u - 15 * u**3 + 105 * u**4
    return -x * x - math.log(x * math.sqrt(math.pi)) + math.log(series)


def _log_abs_binomial(alpha: float, k: int) -> float:
    # math.lgamma is log|Gamma| for negative non-integers too.
    return math.lgamma(alpha + 1) - math.lgamma(k + 1) - math.lgamma(alpha - k + 1)


def sampled_gaussian_rdp(sampling_rate: float, noise_multiplier: float, order: float) -> float:
    """RDP at ``order`` of one Poisson-sampled Gaussian (Mironov, Talwar, Zhang 2019, Sec. 3.3)."""
    _require("sampling_rate", 0 <= sampling_rate <= 1, "in [0, 1]", sampling_rate)
    _require(
        "noise_multiplier",
        math.isfinite(noise_multiplier) and noise_multiplier >= 0,
        "finite and >= 0",
        noise_multiplier,
    )
    _require("order", math.isfinite(order) and order > 1, "finite and > 1", order)
    if sampling_rate == 0:
        return 0.0
    if noise_multiplier == 0:
        return math.inf
    if sampling_rate == 1:
        return order / (2 * noise_multiplier**2)
    if order == int(order):
        log_a = _log_a_integer(sampling_rate, noise_multiplier, int(order))
    else:
        log_a = _log_a_fractional(sampling_rate, noise_multiplier, order)
    return log_a / (order - 1)


def _log_a_integer(q: float, z: float, alpha: int) -> float:
    log_a = -math.inf
    log_q, log_1mq = math.log(q), math.log1p(-q)
    for k in range(alpha + 1):
        term = (
            _log_abs_binomial(alpha, k)
            + k * log_q
            + (alpha - k) * log_1mq
            + (k * k - k) / (2 * z * z)
        )
        log_a = _log_add(log_a, term)
    return log_a


def _log_a_fractional(q: float, z: float, alpha: float) -> float:
    # Two series split at z0, weighted by Gaussian tails; the binomials change sign with k.
    log_a0 = log_a1 = -math.inf
    z0 = z * z * math.log(1 / q - 1) + 0.5
    log_q, log_1mq = math.log(q), math.log1p(-q)
    sqrt2z = math.sqrt(2) * z
    sign = 1
    for k in range(_MAX_SERIES_TERMS):
        if k > 0 and alpha - (k - 1) < 0:
            sign = -sign
        coef = _log_abs_binomial(alpha, k)
        j = alpha - k
        s0 = (
            coef
            + k * log_q
            + j * log_1mq
            + (k * k - k) / (2 * z * z)
            + math.log(0.5)
            + _log_erfc((k - z0) / sqrt2z)
        )
        s1 = (
            coef
            + j * log_q
            + k * log_1mq
            + (j * j - j) / (2 * z * z)
            + math.log(0.5)
            + _log_erfc((z0 - j) / sqrt2z)
        )
        if sign > 0:
            log_a0, log_a1 = _log_add(log_a0, s0), _log_add(log_a1, s1)
        else:
            log_a0, log_a1 = _log_sub(log_a0, s0), _log_sub(log_a1, s1)
        if max(s0, s1) < _SERIES_CUTOFF:
            return _log_add(log_a0, log_a1)
    raise ArithmeticError(f"RDP series did not converge for q={q}, z={z}, order={alpha}")


def epsilon_from_rdp(order: float, rdp: float, delta: float) -> float:
    """Balle et al. 2020, Theorem 21: eps = rdp + log1p(-1/a) - log(delta a) / (a - 1)."""
    if math.isinf(rdp):
        return math.inf
    if delta * delta + math.expm1(-rdp) >= 0:
        return 0.0
    if order <= 1.01:
        return math.inf  # the bound is unstable there
    return rdp + math.log1p(-1 / order) - math.log(delta * order) / (order - 1)


@dataclass(frozen=True)
class SampledGaussianSteps:
    """``steps`` applications of the Gaussian with ``noise_multiplier`` at ``sampling_rate``."""

    noise_multiplier: float
    sampling_rate: float
    steps: int

    def __post_init__(self) -> None:
        _require(
            "noise_multiplier",
            math.isfinite(self.noise_multiplier) and self.noise_multiplier >= 0,
            "finite and >= 0",
            self.noise_multiplier,
        )
        _require("sampling_rate", 0 <= self.sampling_rate <= 1, "in [0, 1]", self.sampling_rate)
        _require("steps", self.steps >= 0, ">= 0", self.steps)


@dataclass(frozen=True)
class EpsilonSpent:
    """(epsilon, delta) of a ledger, and the RDP order that gave it."""

    epsilon: float
    delta: float
    order: float


@dataclass(frozen=True)
class RdpLedger:
    """Sampled-Gaussian steps composed under RDP; immutable: :meth:`plus` returns a new ledger."""

    events: tuple[SampledGaussianSteps, ...] = ()
    orders: tuple[float, ...] = DEFAULT_ORDERS

    def __post_init__(self) -> None:
        _require(
            "orders",
            len(self.orders) > 0 and all(math.isfinite(o) and o > 1 for o in self.orders),
            "one or more finite orders > 1",
            self.orders,
        )

    def plus(self, noise_multiplier: float, sampling_rate: float, steps: int = 1) -> RdpLedger:
        event = SampledGaussianSteps(noise_multiplier, sampling_rate, steps)
        return RdpLedger(self.events + (event,), self.orders)

    @property
    def steps(self) -> int:
        return sum(e.steps for e in self.events)

    def rdp(self) -> list[float]:
        """The ledger's RDP at each order: the steps' RDP, summed."""
        total = [0.0] * len(self.orders)
        for e in self.events:
            if e.steps == 0:
                continue
            for i, order in enumerate(self.orders):
                total[i] += e.steps * sampled_gaussian_rdp(
                    e.sampling_rate, e.noise_multiplier, order
                )
        return total

    def epsilon(self, delta: float) -> EpsilonSpent:
        """The smallest epsilon over the orders at ``delta``."""
        _require("delta", 0 < delta < 1, "in (0, 1)", delta)
        best = EpsilonSpent(math.inf, delta, self.orders[0])
        for order, rdp in zip(self.orders, self.rdp()):
            eps = epsilon_from_rdp(order, rdp, delta)
            if eps < best.epsilon:
                best = EpsilonSpent(eps, delta, order)
        return best


def _log_normal_cdf(x: float) -> float:
    return math.log(0.5) + _log_erfc(-x / math.sqrt(2))


def gaussian_delta(epsilon: float, noise_multiplier: float) -> float:
    """The tight delta at ``epsilon`` of a Gaussian with std ``noise_multiplier`` times the
    sensitivity (Balle and Wang 2018, Theorem 8)."""
    _require("epsilon", math.isfinite(epsilon) and epsilon >= 0, "finite and >= 0", epsilon)
    _require(
        "noise_multiplier",
        math.isfinite(noise_multiplier) and noise_multiplier > 0,
        "finite and > 0",
        noise_multiplier,
    )
    z = noise_multiplier
    a = _log_normal_cdf(1 / (2 * z) - epsilon * z)
    b = epsilon + _log_normal_cdf(-1 / (2 * z) - epsilon * z)
    return max(0.0, math.exp(a) - math.exp(b)) if a > b else 0.0


def _smallest_passing(too_small: Callable[[float], bool], lo: float, hi: float) -> float:
    """The smallest x in (lo, hi] with too_small(x) False, by bisection to the last bit; ``lo``
    must be too small and ``hi`` not (both are searched outwards first)."""
    while too_small(hi):
        lo, hi = hi, hi * 2
    while lo > 1e-300 and not too_small(lo):
        hi, lo = lo, lo / 2
    for _ in range(200):
        mid = (lo + hi) / 2
        if mid in (lo, hi):
            break
        if too_small(mid):
            lo = mid
        else:
            hi = mid
    return hi


def gaussian_epsilon(noise_multiplier: float, delta: float) -> float:
    """The smallest epsilon with gaussian_delta(epsilon, noise_multiplier) <= delta (bisection)."""
    _require("delta", 0 < delta < 1, "in (0, 1)", delta)
    if gaussian_delta(0.0, noise_multiplier) <= delta:
        return 0.0
    return _smallest_passing(lambda e: gaussian_delta(e, noise_multiplier) > delta, 0.0, 1.0)


def gaussian_noise_multiplier(epsilon: float, delta: float) -> float:
    """The smallest noise multiplier z (std / sensitivity) with gaussian_delta(epsilon, z) <= delta:
    the analytic Gaussian mechanism (Balle and Wang 2018)."""
    _require("epsilon", math.isfinite(epsilon) and epsilon > 0, "finite and > 0", epsilon)
    _require("delta", 0 < delta < 1, "in (0, 1)", delta)
    return _smallest_passing(lambda z: gaussian_delta(epsilon, z) > delta, 1.0, 1.0)


def composed_gaussian_epsilon(noise_multiplier: float, rounds: int, delta: float) -> float:
    """Epsilon of ``rounds`` Gaussians of one noise multiplier: exactly one Gaussian of
    ``noise_multiplier / sqrt(rounds)`` (Dong, Roth, Su 2019, Corollary 3.3)."""
    _require("rounds", rounds >= 0, ">= 0", rounds)
    if rounds == 0:
        return 0.0
    return gaussian_epsilon(noise_multiplier / math.sqrt(rounds), delta)

