"""An update on secure aggregation's fixed-point grid (docs/secure-aggregation.md, Quantization).

The update is clipped to ``C' = C (1 - sqrt(d) 2^-36)`` (with a floating-point margin, see
:func:`units_limit`) and each value v becomes ``a = v 2^36 / C``, rounded to ``floor(a) + 1``
with probability ``a - floor(a)``, else to ``floor(a)``: E[x] = a, and each coordinate moves by less than one unit, so
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


def units_limit(d: int) -> float:
    """The norm ``a`` is clipped to, in units: ``2^36 - sqrt(d)`` (C' in units), shrunk by
    ``(d + 16) 2^-50`` more, since the norm and the scaled values carry relative rounding errors
    of at most about ``(d + 16) 2^-53``: so ``||a|| <= 2^36 - sqrt(d)`` holds exactly, not just
    nearly (for d = 10^6 the margin is about 10^-9 of C). The Java ``Quantizer`` uses the same."""
    return (2.0**GRID_BITS - math.sqrt(d)) * (1 - (d + 16) * 2.0**-50)


def secure_generator() -> np.random.Generator:
    """A NumPy generator seeded with 256 bits from the operating system's CSPRNG."""
    return np.random.default_rng(secrets.randbits(256))


def _norm(v: npt.NDArray[np.float64], max_abs: float) -> float:
    """The L2 norm, scaled by the largest magnitude so that squares neither overflow nor vanish."""
    scaled = v / max_abs
    return max_abs * math.sqrt(float(np.dot(scaled, scaled)))


def quantize(
    values: npt.ArrayLike, clip_norm: float, rng: np.random.Generator | None = None
) -> npt.NDArray[np.int64]:
    """``values`` (a flat vector of d finite reals) clipped, scaled to the grid and rounded at
    random without bias, as signed 64-bit integers. ``rng``: a CSPRNG-seeded generator unless
    given (tests give a seeded one)."""
    if not (clip_norm > 0 and math.isfinite(clip_norm)):
        raise ValueError(f"clipNorm must be > 0 and finite, was {clip_norm}")
    v = np.asarray(values, dtype=np.float64).ravel()
    if len(v) == 0:
        raise ValueError("an update to quantize needs at least one value")
    if not np.isfinite(v).all():
        raise ValueError("an update to quantize must hold only finite values")
    max_abs = float(np.max(np.abs(v)))
    if max_abs == 0:
        return np.zeros(len(v), dtype=np.int64)
    norm = _norm(v, max_abs)
    limit = units_limit(len(v))
    if norm * (2.0**GRID_BITS / clip_norm) <= limit:
        a = v * 2.0**GRID_BITS / clip_norm  # exact for a value on the grid
    else:
        a = v * (limit / norm)
    floor = np.floor(a)
    generator = rng if rng is not None else secure_generator()
    up = generator.random(len(a)) < a - floor
    x: npt.NDArray[np.int64] = (floor + up).astype(np.int64)
    return x


def to_words(x: npt.NDArray[np.int64]) -> npt.NDArray[np.uint64]:
    """Signed integers as 64-bit words modulo 2^64 (two's complement)."""
    return np.ascontiguousarray(x, dtype=np.int64).view(np.uint64)
