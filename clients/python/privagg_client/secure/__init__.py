"""Secure aggregation, wire protocol v3 (docs/secure-aggregation.md; v2 added the receipts, v3 the
consistency round's signed survivor list): the job learns the sum of a round's quantized updates
and nothing about any one of them. Pure protocol code (the standard
library, NumPy, ``cryptography`` and PyNaCl, libsodium's edwards25519 arithmetic);
:mod:`privagg_client.secure_round` runs it over Kafka.

:class:`ClientSession` is one client's side of one round; :func:`quantize` puts an update on the
protocol's fixed-point grid; :mod:`.primitives`, :mod:`.group` (edwards25519's prime-order
subgroup: mask keys, commitments, Feldman's check) and :mod:`.shamir` (over its order l) hold the
byte-level parts.
"""

from .messages import (
    AdvertiseKeys,
    Commitments,
    Confirmed,
    Consistency,
    EncryptedShare,
    Opened,
    RevealedShare,
    Roster,
    RosterEntry,
    RoutedShare,
    ShareKeys,
    ShareReceipt,
    Shares,
    SignedSurvivors,
    SurvivorSignature,
    Survivors,
    UnmaskShares,
)
from .quantize import quantize, to_words
from .session import SYSTEM_RANDOMNESS, ClientSession, Randomness

__all__ = [
    "AdvertiseKeys",
    "ClientSession",
    "Commitments",
    "Confirmed",
    "Consistency",
    "EncryptedShare",
    "Opened",
    "Randomness",
    "RevealedShare",
    "Roster",
    "RosterEntry",
    "RoutedShare",
    "SYSTEM_RANDOMNESS",
    "ShareKeys",
    "ShareReceipt",
    "Shares",
    "SignedSurvivors",
    "SurvivorSignature",
    "Survivors",
    "UnmaskShares",
    "quantize",
    "to_words",
]
