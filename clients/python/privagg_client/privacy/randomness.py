"""Noise from the operating system's cryptographically secure generator (``os.urandom``).

NumPy's and torch's generators are fast but predictable from their state; a client's privacy
noise must not be. Uniforms take 52 random bits each; where a sampler's tail comes from small
uniforms it takes 117 bits (:func:`fine_uniform`), so the noise reaches 12.8 std (Gaussian) or
81.8 scales (Laplace, Gumbel) rather than 8.6 or 36. Tests pass a seeded
:class:`RandomBytes` instead of :data:`SYSTEM`.
"""

from __future__ import annotations

import math
import os
from typing import TYPE_CHECKING, Callable

import numpy as np

if TYPE_CHECKING:
    import numpy.typing as npt

RandomBytes = Callable[[int], bytes]
"""``n`` random bytes; :data:`SYSTEM` is ``os.urandom``."""

SYSTEM: RandomBytes = os.urandom


def uniform(count: int, random_bytes: RandomBytes = SYSTEM) -> npt.NDArray[np.float64]:
    """``count`` uniforms in (0, 1): (k + 0.5) / 2^52 for 52 random bits k, each exact in double,
    so never 0 or 1 (with 53 bits the largest would round to 1)."""
    words = np.frombuffer(random_bytes(8 * count), dtype="<u8", count=count)
    out: npt.NDArray[np.float64] = ((words >> np.uint64(12)).astype(np.float64) + 0.5) * 2.0**-52
    return out


def fine_uniform(count: int, random_bytes: RandomBytes = SYSTEM) -> npt.NDArray[np.float64]:
    """``count`` uniforms in (0, 1] from 117 random bits each, spaced 2^-117 near 0: the tails the
    samplers below build from small uniforms then reach :data:`TAIL_BITS` bits far. (The largest
    values round to 1, where every sampler below yields a finite value.)"""
    words = np.frombuffer(random_bytes(16 * count), dtype="<u8", count=2 * count)
    high = (words[:count] >> np.uint64(11)).astype(np.float64)
    low = ((words[count:] >> np.uint64(11)).astype(np.float64) + 0.5) * 2.0**-64
    out: npt.NDArray[np.float64] = (high + low) * 2.0**-53
    return out


TAIL_MASS = 2.0**-118
"""What each draw of :func:`normal`, :func:`laplace` or :func:`gumbel` cuts off of its exact
distribution's tails at most (the smallest fine uniform is 2^-118: a Gaussian reaches 12.8 std,
Laplace and Gumbel noise 81.8 scales)."""


def sampler_delta(epsilon: float, draws: int) -> float:
    """What the cut-off tails add to an (epsilon, delta) statement of a release made of
    ``draws`` draws: the sampler is within total variation tau = draws * TAIL_MASS of the exact
    mechanism, so an (epsilon, delta) mechanism becomes (epsilon, delta + (1 + e^epsilon) tau).
    This treats the 52-bit signs, angles and coins as exact (their grid is 2^-52)."""
    if epsilon > 700:
        return math.inf
    return (1 + math.exp(epsilon)) * draws * TAIL_MASS


def normal(
    count: int, std: float = 1.0, random_bytes: RandomBytes = SYSTEM
) -> npt.NDArray[np.float64]:
    """``count`` draws of N(0, std^2): Box-Muller, the radius from fine uniforms (its tail), the
    angle from 52-bit ones."""
    pairs = (count + 1) // 2
    radius = np.sqrt(-2.0 * np.log(fine_uniform(pairs, random_bytes)))
    angle = 2.0 * np.pi * uniform(pairs, random_bytes)
    out = np.concatenate([radius * np.cos(angle), radius * np.sin(angle)])[:count]
    scaled: npt.NDArray[np.float64] = std * out
    return scaled


def laplace(
    count: int, scale: float, random_bytes: RandomBytes = SYSTEM
) -> npt.NDArray[np.float64]:
    """``count`` draws of Laplace(0, scale): a random sign times an exponential of the scale,
    -scale ln(w) for a fine uniform w."""
    sign = np.where(uniform(count, random_bytes) < 0.5, -1.0, 1.0)
    out: npt.NDArray[np.float64] = -scale * sign * np.log(fine_uniform(count, random_bytes))
    return out


def gumbel(
    count: int, scale: float, random_bytes: RandomBytes = SYSTEM
) -> npt.NDArray[np.float64]:
    """``count`` draws of Gumbel(0, scale): -scale ln(E) for E ~ Exp(1), both of E's tails from
    fine uniforms: above its median ln 2, E = ln 2 - ln(w) (memoryless); below it,
    E = -ln(1 - w / 2), which reaches down to 2^-119 (the Gumbel's upper tail)."""
    above = uniform(count, random_bytes) < 0.5
    w = fine_uniform(count, random_bytes)
    exponential = np.where(above, math.log(2) - np.log(w), -np.log1p(-w / 2))
    out: npt.NDArray[np.float64] = -scale * np.log(exponential)
    return out


def seeded(seed: int) -> RandomBytes:
    """Reproducible bytes for tests and simulations, never for a real client's noise."""
    generator = np.random.default_rng(seed)

    def random_bytes(n: int) -> bytes:
        return generator.bytes(n)

    return random_bytes
