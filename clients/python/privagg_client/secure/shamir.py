"""Shamir secret sharing over the integers mod l, the order of edwards25519's prime-order subgroup
(Shamir, "How to share a secret", CACM 1979), so that every coefficient has a Feldman commitment
in that group (``group.commitments``) and a holder checks its share before relying on it: a share
is the polynomial's value at x = v + 1 for neighbour v, written as 32 bytes, little-endian."""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterable, Mapping, Sequence

from . import group
from .group import ORDER

PRIME = ORDER
"""l, edwards25519's group order: secrets (mask keys, self-mask seeds) are scalars below it."""

SHARE_BYTES = 32
"""A share: a scalar as 32 bytes, little-endian."""


def random_coefficients(
    threshold: int, randbelow: Callable[[int], int] = secrets.randbelow
) -> list[int]:
    """The ``threshold - 1`` non-constant coefficients of a sharing polynomial, uniform in
    [1, l) (a zero coefficient has no commitment libsodium can compute)."""
    if threshold < 1:
        raise ValueError(f"threshold must be >= 1, was {threshold}")
    return [1 + randbelow(PRIME - 1) for _ in range(threshold - 1)]


def evaluate(secret: int, coefficients: Sequence[int], x: int) -> int:
    """The polynomial ``secret + c1 x + c2 x^2 + ...`` at ``x``, modulo p (Horner's rule)."""
    if not 0 <= secret < PRIME:
        raise ValueError("a secret must be in [0, l)")
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
    """A share as 32 bytes, little-endian: a scalar below l."""
    return group.scalar_bytes(value)


def share_from_bytes(data: bytes) -> int:
    """A share from its 32 bytes; ValueError when it is not 32 bytes or not below l."""
    return group.scalar(data)
