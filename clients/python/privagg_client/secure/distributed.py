"""The client's side of the distributed discrete Gaussian (docs/secure-aggregation.md,
"Distributed noise"), as the Java ``GridEncoder``, ``RandomizedHadamard``, ``WordPacking`` and
``DiscreteGaussian``: clip, scale to the job's grid, rotate, round conditionally, add a share of
discrete Gaussian noise, keep the low ``bits`` bits of each word.

The noise is exact: Canonne, Kamath, Steinke, "The Discrete Gaussian for Differential Privacy"
(NeurIPS 2020), Algorithm 3, with Python's integers (no floating point in any decision).
"""

from __future__ import annotations

import hashlib
import math
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

import numpy as np

from .primitives import lp, mask, u64

if TYPE_CHECKING:
    import numpy.typing as npt

class DistributedNoiseFloorLike(Protocol):
    """What the spec promises (``privagg_client.job.DistributedNoiseFloor``)."""

    @property
    def fewest_honest_inputs(self) -> int: ...

    @property
    def noise_multiplier(self) -> float | None: ...


RandBelow = Callable[[int], int]
"""A uniform integer in ``[0, n)``: :func:`secrets.randbelow` unless a test seeds one."""

ROTATION_LABEL = "privagg-ddg-rotation-v1"
MAX_ROUNDING_TRIES = 200
MIN_BITS = 8
MAX_BITS = 32


# --- the exact sampler ------------------------------------------------------------------------


def _bernoulli(numerator: int, denominator: int, randbelow: RandBelow) -> bool:
    return randbelow(denominator) < numerator


def _bernoulli_exp_minus_at_most_one(n: int, d: int, randbelow: RandBelow) -> bool:
    """Bernoulli(exp(-n/d)) for 0 <= n/d <= 1 (CKS20 Algorithm 1)."""
    k = 1
    while _bernoulli(n, d * k, randbelow):
        k += 1
    return k % 2 == 1


def bernoulli_exp_minus(n: int, d: int, randbelow: RandBelow) -> bool:
    """Bernoulli(exp(-n/d)) for n/d >= 0, the integer part peeled off one exp(-1) at a time."""
    whole, rest = divmod(n, d)
    for _ in range(whole):
        if not _bernoulli_exp_minus_at_most_one(1, 1, randbelow):
            return False
    return _bernoulli_exp_minus_at_most_one(rest, d, randbelow)


def discrete_laplace(t: int, randbelow: RandBelow) -> int:
    """P[x] proportional to exp(-|x|/t), t a positive integer (CKS20 Algorithm 2)."""
    while True:
        u = randbelow(t)
        if not _bernoulli_exp_minus_at_most_one(u, t, randbelow):
            continue
        v = 0
        while _bernoulli_exp_minus_at_most_one(1, 1, randbelow):
            v += 1
        x = u + t * v
        negative = randbelow(2) == 1
        if negative and x == 0:
            continue
        return -x if negative else x


def _floor_sqrt(num: int, den: int) -> int:
    """floor(sqrt(num / den)), exactly: isqrt(floor(num / den)) is it, since floor(sqrt(x)) =
    floor(sqrt(floor(x)))."""
    return math.isqrt(num // den)


class DiscreteGaussian:
    """N_Z(0, sigma^2) with sigma^2 = ``numerator / denominator`` (CKS20 Algorithm 3)."""

    def __init__(self, numerator: int, denominator: int) -> None:
        if numerator < 1 or denominator < 1 or numerator > 1 << 62:
            raise ValueError(
                "variance must be a positive rational numerator / denominator with numerator"
                f" <= 2^62, was {numerator} / {denominator}"
            )
        self.numerator = numerator
        self.denominator = denominator
        self.scale = _floor_sqrt(numerator, denominator) + 1
        self._rejection_denominator = 2 * numerator * self.scale * self.scale * denominator

    def sample(self, randbelow: RandBelow = secrets.randbelow) -> int:
        t, num, den = self.scale, self.numerator, self.denominator
        while True:
            y = discrete_laplace(t, randbelow)
            gap = abs(y) * t * den - num
            if bernoulli_exp_minus(gap * gap, self._rejection_denominator, randbelow):
                return y

    def samples(self, count: int, randbelow: RandBelow = secrets.randbelow) -> list[int]:
        return [self.sample(randbelow) for _ in range(count)]


# --- the rotation -----------------------------------------------------------------------------


def padded_dimension(dimension: int) -> int:
    """The power of two at or above ``dimension``."""
    if dimension < 1 or dimension > 1 << 30:
        raise ValueError(f"dimension must be in [1, 2^30], was {dimension}")
    return 1 if dimension == 1 else 1 << (dimension - 1).bit_length()


def rotation_signs(job_id: str, round_number: int, padded: int) -> npt.NDArray[np.bool_]:
    """True where the round's sign is -: bit 0 of word j of the mask under
    ``SHA-256(lp(label) || lp(jobId) || u64(round))``. Public, and the same for every client."""
    seed = hashlib.sha256(lp(ROTATION_LABEL) + lp(job_id) + u64(round_number)).digest()
    negative: npt.NDArray[np.bool_] = (mask(seed, 0, padded) & np.uint64(1)) == np.uint64(1)
    return negative


def _hadamard(y: npt.NDArray[np.float64]) -> None:
    """The normalized fast Walsh-Hadamard transform, in place."""
    n = len(y)
    half = 1
    while half < n:
        view = y.reshape(-1, 2, half)
        a = view[:, 0, :].copy()
        view[:, 0, :] += view[:, 1, :]
        view[:, 1, :] = a - view[:, 1, :]
        half <<= 1
    y *= 1 / math.sqrt(n)


def rotate(x: npt.ArrayLike, negative: npt.NDArray[np.bool_]) -> npt.NDArray[np.float64]:
    """``H D x / sqrt(p)`` of x padded with zeros to p = len(negative)."""
    v = np.asarray(x, dtype=np.float64).ravel()
    y = np.zeros(len(negative), dtype=np.float64)
    y[: len(v)] = np.where(negative[: len(v)], -v, v)
    _hadamard(y)
    return y


def invert(y: npt.ArrayLike, negative: npt.NDArray[np.bool_]) -> npt.NDArray[np.float64]:
    """``D H y / sqrt(p)``: the rotation's inverse."""
    out = np.array(y, dtype=np.float64)
    _hadamard(out)
    return np.where(negative, -out, out)


# --- the grid ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class NoisePlan:
    """The job's plan of a round (the ``Opened`` message's ``distributedNoise``)."""

    bits: int
    dimension: int
    padded_dimension: int
    units_per_clip_norm: float
    max_squared_norm: int
    variance_numerator: int
    variance_denominator: int
    noise_shares: int

    def __post_init__(self) -> None:
        if not MIN_BITS <= self.bits <= MAX_BITS:
            raise ValueError(f"bits must be in [{MIN_BITS}, {MAX_BITS}], was {self.bits}")
        if self.padded_dimension != padded_dimension(self.dimension):
            raise ValueError(
                f"paddedDimension must be the power of two at or above {self.dimension},"
                f" was {self.padded_dimension}"
            )
        if not 1 <= self.units_per_clip_norm <= 2.0**30:
            raise ValueError(
                f"unitsPerClipNorm must be in [1, 2^30], was {self.units_per_clip_norm}"
            )
        if self.max_squared_norm < 1 or self.noise_shares < 1:
            raise ValueError("maxSquaredNorm and noiseShares must be >= 1")
        DiscreteGaussian(self.variance_numerator, self.variance_denominator)

    @property
    def word_mask(self) -> int:
        return (1 << self.bits) - 1

    def guaranteed_noise_multiplier(self) -> float:
        """sqrt(noiseShares sigma^2 / maxSquaredNorm): the noise multiplier the honest shares of
        this plan give the sum, before KLS21's (tiny) tau correction."""
        sigma2 = self.variance_numerator / self.variance_denominator
        return math.sqrt(self.noise_shares * sigma2 / self.max_squared_norm)


def tau(sigma_squared: float, n: int) -> float:
    """KLS21 Theorem 1's tau for n shares of variance sigma^2 (as the Java accounting)."""
    rate = 2 * math.pi * math.pi * sigma_squared
    total = 0.0
    for k in range(1, n):
        term = math.exp(-rate * k / (k + 1))
        if term == 0:
            break
        total += term
    return 10 * total * (1 + 1e-9)


ROUNDING_BETA = math.exp(-0.5)


def rounded_squared_bound(c: float, padded: int) -> float:
    """KLS21 Theorem 1 (conditional randomized rounding): a vector of norm at most c rounds to
    squared norm at most c^2 + p/4 + sqrt(2 ln(1/beta)) (c + sqrt(p)/2) with probability at least
    1 - beta; never more than (c + sqrt(p))^2 (``DistributedNoisePlan.roundedSquaredBound``)."""
    root = math.sqrt(padded)
    conditional = c * c + padded / 4 + math.sqrt(2 * math.log(1 / ROUNDING_BETA)) * (c + root / 2)
    return min(conditional, (c + root) * (c + root))


def announcement_problem(floor: DistributedNoiseFloorLike | None, plan: NoisePlan | None) -> str | None:
    """Why a client must not mask with the round's announced plan, or None: noise where the spec
    plans none or none where it plans some, another model size, or shares that give the fewest
    honest inputs the spec allows less than its noise multiplier over the announced sensitivity
    (KLS21's bound, as the job's ledger charges it)."""
    if floor is None:
        return None if plan is None else "the round announces distributed noise the spec does not plan"
    if plan is None:
        return "the round announces no distributed noise, which the spec plans"
    if floor.noise_multiplier is None:
        return (
            "the spec plans its noise from privacy.targetEpsilon, which this client cannot"
            " recompute, so it cannot check the round's noise shares: give the noise multiplier"
            " the job planned (each model's privacy statement names it) as"
            " JobConfig.from_spec(path, noise_multiplier=Z)"
        )
    # A bound below what rounding a clipped update needs would make rounding fail for large
    # updates only: whether a client sends would tell the job whether its update is large.
    needed = math.floor(rounded_squared_bound(plan.units_per_clip_norm, plan.padded_dimension))
    if plan.max_squared_norm + 1 < needed:
        return (
            f"the round announces squared-norm bound {plan.max_squared_norm}, below the {needed}"
            " that rounding an update clipped to C on its grid needs"
        )
    sigma2 = plan.variance_numerator / plan.variance_denominator
    n = floor.fewest_honest_inputs
    if n < 1 or sigma2 < 0.25:
        return f"the round's noise shares are outside the accounting (n {n}, sigma^2 {sigma2})"
    given = 1 / math.sqrt(
        plan.max_squared_norm / (n * sigma2) + 2 * tau(sigma2, n) * plan.padded_dimension
    )
    if given < floor.noise_multiplier * (1 - 1e-12):
        return (
            f"the round's noise shares give noise multiplier {given} over its grid,"
            f" below the spec's {floor.noise_multiplier}"
        )
    return None


def _norm(v: npt.NDArray[np.float64]) -> float:
    max_abs = float(np.max(np.abs(v))) if len(v) else 0.0
    if max_abs == 0:
        return 0.0
    scaled = v / max_abs
    return max_abs * math.sqrt(float(np.dot(scaled, scaled)))


def round_conditionally(
    values: npt.ArrayLike,
    clip_norm: float,
    plan: NoisePlan,
    negative: npt.NDArray[np.bool_],
    rng: np.random.Generator,
) -> npt.NDArray[np.int64]:
    """The update clipped to ``clip_norm``, on the grid, rotated, and rounded at random until its
    squared norm is at most ``plan.max_squared_norm`` (exact integer arithmetic)."""
    if not (clip_norm > 0 and math.isfinite(clip_norm)):
        raise ValueError(f"clipNorm must be > 0 and finite, was {clip_norm}")
    v = np.asarray(values, dtype=np.float64).ravel()
    if len(v) != plan.dimension:
        raise ValueError(f"update has {len(v)} values, the plan {plan.dimension}")
    if not np.isfinite(v).all():
        raise ValueError("an update must hold only finite values")
    norm = _norm(v)
    scaled = v * (plan.units_per_clip_norm / max(norm, clip_norm)) if norm > 0 else v
    y = rotate(scaled, negative)
    floor = np.floor(y)
    for _ in range(MAX_ROUNDING_TRIES):
        up = rng.random(len(y)) < y - floor
        units: npt.NDArray[np.int64] = (floor + up).astype(np.int64)
        if int(np.dot(units, units)) <= plan.max_squared_norm:
            return units
    # Below 1e-40 under a plan the client checked. Failing loudly would let a job that set the
    # bound learn which updates are large; the zero vector is sent, whatever the update was.
    return np.zeros(len(y), dtype=np.int64)


def encode(
    values: npt.ArrayLike,
    clip_norm: float,
    plan: NoisePlan,
    job_id: str,
    round_number: int,
    rng: np.random.Generator,
    randbelow: RandBelow = secrets.randbelow,
) -> npt.NDArray[np.uint64]:
    """The words a client masks: the rounded update plus a noise share, modulo 2^bits."""
    negative = rotation_signs(job_id, round_number, plan.padded_dimension)
    units = round_conditionally(values, clip_norm, plan, negative, rng)
    share = DiscreteGaussian(plan.variance_numerator, plan.variance_denominator)
    noise = np.array(share.samples(len(units), randbelow), dtype=np.int64)
    words = (units + noise).view(np.uint64) & np.uint64(plan.word_mask)
    return words


def decode(
    sum_words: npt.ArrayLike, clip_norm: float, plan: NoisePlan, job_id: str, round_number: int
) -> npt.NDArray[np.float64]:
    """The job's inverse on an unmasked sum (words modulo 2^64): residues, rotated back, scaled."""
    w = np.asarray(sum_words, dtype=np.uint64) & np.uint64(plan.word_mask)
    half = 1 << (plan.bits - 1)
    signed = w.astype(np.int64) - np.where(w >= np.uint64(half), 1 << plan.bits, 0)
    negative = rotation_signs(job_id, round_number, plan.padded_dimension)
    y = invert(signed.astype(np.float64), negative)
    out: npt.NDArray[np.float64] = y[: plan.dimension] * (clip_norm / plan.units_per_clip_norm)
    return out


# --- the wire ---------------------------------------------------------------------------------


def pack(words: npt.ArrayLike, bits: int) -> bytes:
    """Word j at bits ``[j bits, (j + 1) bits)``, least significant bit first (``WordPacking``)."""
    w = np.asarray(words, dtype=np.uint64)
    if not 1 <= bits <= 64:
        raise ValueError(f"bits must be in [1, 64], was {bits}")
    low = w & np.uint64((1 << bits) - 1) if bits < 64 else w
    as_bytes = low.astype("<u8").view(np.uint8).reshape(-1, 8)
    bit_matrix = np.unpackbits(as_bytes, axis=1, bitorder="little")[:, :bits]
    return np.packbits(bit_matrix.ravel(), bitorder="little").tobytes()


def unpack(packed: bytes, count: int, bits: int) -> npt.NDArray[np.uint64]:
    """The inverse of :func:`pack`; refuses a wrong length or padding bits that are not zero."""
    expected = (count * bits + 7) // 8
    if len(packed) != expected:
        raise ValueError(f"masked input has {len(packed)} bytes, expected {expected}")
    flat = np.unpackbits(np.frombuffer(packed, dtype=np.uint8), bitorder="little")
    if flat[count * bits :].any():
        raise ValueError("masked input's padding bits must be zero")
    matrix = np.zeros((count, 64), dtype=np.uint8)
    matrix[:, :bits] = flat[: count * bits].reshape(count, bits)
    return np.packbits(matrix, axis=1, bitorder="little").view("<u8").ravel().astype(np.uint64)
