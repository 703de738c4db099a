"""An update on secure aggregation's fixed-point grid (docs/secure-aggregation.md, Quantization).

The update is clipped to ``C' = C (1 - sqrt(d) 2^-36)`` and each value v becomes
``a = v 2^36 / C``, rounded to ``floor(a) + 1`` with probability ``a - floor(a)``, else to
``floor(a)``: E[x] = a, and each coordinate moves by less than one unit, so
``||x|| < ||a|| + sqrt(d) <= 2^36``: the quantized update's norm is at most C in units of
``C 2^-36``, and the sum's sensitivity stays C. Values already on the grid are unchanged.
"""

from __future__ import annotations

import math
import secrets
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import numpy.typing as npt

GRID_BITS = 36
"""A unit of the grid is ``C 2^-36``."""


def clip_bound(clip_norm: float, d: int) -> float:
    """``C' = C (1 - sqrt(d) 2^-36)``: the norm an update is clipped to before rounding."""
    if not (clip_norm > 0 and math.isfinite(clip_norm)):
        raise ValueError(f"clipNorm must be > 0 and finite, was {clip_norm}")
    if not 0 < d < 1 << (2 * GRID_BITS):
        raise ValueError(f"the number of coordinates d must be in (0, 2^72), was {d}")
    return clip_norm * (1 - math.sqrt(d) * 2.0**-GRID_BITS)


def secure_generator() -> np.random.Generator:
    """A NumPy generator seeded with 256 bits from the operating system's CSPRNG."""
    return np.random.default_rng(secrets.randbits(256))


def quantize(
    values: npt.ArrayLike, clip_norm: float, rng: np.random.Generator | None = None
) -> npt.NDArray[np.int64]:
    """``values`` (a flat vector of d finite reals) clipped, scaled to the grid and rounded at
    random without bias, as signed 64-bit integers. ``rng``: a CSPRNG-seeded generator unless
    given (tests give a seeded one)."""
    v = np.asarray(values, dtype=np.float64).ravel()
    if not np.isfinite(v).all():
        raise ValueError("an update to quantize must hold only finite values")
    bound = clip_bound(clip_norm, len(v))
    norm = float(np.linalg.norm(v))
    if norm > bound:
        v = v * (bound / norm)
    a = v * 2.0**GRID_BITS / clip_norm
    floor = np.floor(a)
    generator = rng if rng is not None else secure_generator()
    up = generator.random(len(a)) < a - floor
    x: npt.NDArray[np.int64] = (floor + up).astype(np.int64)
    return x


def to_words(x: npt.NDArray[np.int64]) -> npt.NDArray[np.uint64]:
    """Signed integers as 64-bit words modulo 2^64 (two's complement)."""
    return np.ascontiguousarray(x, dtype=np.int64).view(np.uint64)
