"""Noise from the operating system's cryptographically secure generator (``os.urandom``).

NumPy's and torch's generators are fast but predictable from their state; a client's privacy
noise must not be. Uniforms take 52 random bits each; Gaussians come from the Box-Muller
transform, Laplace and Gumbel variates from the inverse CDF. Tests pass a seeded
:class:`RandomBytes` instead of :data:`SYSTEM`.
"""

from __future__ import annotations

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


def normal(
    count: int, std: float = 1.0, random_bytes: RandomBytes = SYSTEM
) -> npt.NDArray[np.float64]:
    """``count`` draws of N(0, std^2) (Box-Muller on secure uniforms)."""
    pairs = (count + 1) // 2
    u = uniform(2 * pairs, random_bytes)
    radius = np.sqrt(-2.0 * np.log(u[:pairs]))
    angle = 2.0 * np.pi * u[pairs:]
    out = np.concatenate([radius * np.cos(angle), radius * np.sin(angle)])[:count]
    scaled: npt.NDArray[np.float64] = std * out
    return scaled


def laplace(
    count: int, scale: float, random_bytes: RandomBytes = SYSTEM
) -> npt.NDArray[np.float64]:
    """``count`` draws of Laplace(0, scale) by the inverse CDF."""
    u = uniform(count, random_bytes) - 0.5
    out: npt.NDArray[np.float64] = -scale * np.sign(u) * np.log1p(-2.0 * np.abs(u))
    return out


def gumbel(
    count: int, scale: float, random_bytes: RandomBytes = SYSTEM
) -> npt.NDArray[np.float64]:
    """``count`` draws of Gumbel(0, scale) by the inverse CDF."""
    out: npt.NDArray[np.float64] = -scale * np.log(-np.log(uniform(count, random_bytes)))
    return out


def seeded(seed: int) -> RandomBytes:
    """Reproducible bytes for tests and simulations, never for a real client's noise."""
    generator = np.random.default_rng(seed)

    def random_bytes(n: int) -> bytes:
        return generator.bytes(n)

    return random_bytes
