"""Parameter checks shared by the client-side privacy modules: each failure names the parameter,
what is allowed and what was given."""

from __future__ import annotations

import math
import numbers

from ..errors import PrivacyParameterError


def require(name: str, ok: bool, allowed: str, value: object) -> None:
    if not ok:
        raise PrivacyParameterError(f"{name} must be {allowed}, was {value!r}")


def real(value: object) -> float:
    """``value`` as a finite float (NumPy scalars too), or NaN, which fails every comparison."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return math.nan
    try:
        x = float(value)
    except OverflowError:
        return math.nan
    return x if math.isfinite(x) else math.nan


def positive(name: str, value: float) -> None:
    require(name, real(value) > 0, "finite and > 0", value)
