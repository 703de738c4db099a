"""Shamir secret sharing over the prime field of p = 2^521 - 1 (Shamir, "How to share a secret",
CACM 1979), as secure aggregation v1 uses it: a share is the polynomial's value at x = v + 1 for
neighbour v, written as 66 bytes, big-endian."""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterable, Mapping, Sequence

PRIME = (1 << 521) - 1
"""p = 2^521 - 1, a Mersenne prime: every 32-byte secret is an element of the field."""

SHARE_BYTES = 66
"""A share: a field element as 66 bytes, big-endian (521 bits fit in 66 bytes)."""


def random_coefficients(
    threshold: int, randbelow: Callable[[int], int] = secrets.randbelow
) -> list[int]:
    """The ``threshold - 1`` non-constant coefficients of a sharing polynomial, uniform in
    [0, p)."""
    if threshold < 1:
        raise ValueError(f"threshold must be >= 1, was {threshold}")
    return [randbelow(PRIME) for _ in range(threshold - 1)]


def evaluate(secret: int, coefficients: Sequence[int], x: int) -> int:
    """The polynomial ``secret + c1 x + c2 x^2 + ...`` at ``x``, modulo p (Horner's rule)."""
    if not 0 <= secret < PRIME:
        raise ValueError("a secret must be in [0, 2^521 - 1)")
    value = 0
    for c in reversed([secret, *coefficients]):
        value = (value * x + c) % PRIME
    return value


def split(secret: int, coefficients: Sequence[int], xs: Iterable[int]) -> dict[int, int]:
    """The shares of ``secret`` at each of ``xs`` (non-zero field elements), by x."""
    out = {}
    for x in xs:
        if not 0 < x < PRIME:
            raise ValueError(f"a share's x must be in (0, p), was {x}")
        out[x] = evaluate(secret, coefficients, x)
    return out


def reconstruct(shares: Mapping[int, int]) -> int:
    """The constant term of the polynomial through the points ``{x: y}`` (Lagrange interpolation
    at 0). With t shares of a degree t - 1 polynomial this is the secret."""
    if not shares:
        raise ValueError("reconstruction needs at least one share")
    secret = 0
    for xi, yi in shares.items():
        numerator, denominator = 1, 1
        for xj in shares:
            if xj != xi:
                numerator = numerator * xj % PRIME
                denominator = denominator * (xj - xi) % PRIME
        secret = (secret + yi * numerator * pow(denominator, -1, PRIME)) % PRIME
    return secret


def share_to_bytes(value: int) -> bytes:
    """A share as 66 bytes, big-endian."""
    if not 0 <= value < PRIME:
        raise ValueError("a share must be in [0, 2^521 - 1)")
    return value.to_bytes(SHARE_BYTES, "big")


def share_from_bytes(data: bytes) -> int:
    """A share from its 66 bytes; ValueError when it is not 66 bytes or not below p."""
    if len(data) != SHARE_BYTES:
        raise ValueError(f"a share is {SHARE_BYTES} bytes, was {len(data)}")
    value = int.from_bytes(data, "big")
    if value >= PRIME:
        raise ValueError("a share is not below 2^521 - 1")
    return value
