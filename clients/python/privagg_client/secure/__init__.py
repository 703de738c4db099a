"""Secure aggregation, wire protocol v3 (docs/secure-aggregation.md; v2 added the receipts, v3 the
consistency round's signed survivor list): the job learns the sum of a round's quantized updates
and nothing about any one of them. Pure protocol code (the standard
library, NumPy and ``cryptography``); :mod:`privagg_client.secure_round` runs it over Kafka.

:class:`ClientSession` is one client's side of one round; :func:`quantize` puts an update on the
protocol's fixed-point grid; :mod:`.primitives` and :mod:`.shamir` hold the byte-level parts.
"""

from .messages import (
    AdvertiseKeys,
    Confirmed,
    Consistency,
    EncryptedShare,
    Opened,
    RevealedShare,
    Roster,
    RosterEntry,
    RoutedShare,
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
    "ShareReceipt",
    "Shares",
    "SignedSurvivors",
    "SurvivorSignature",
    "Survivors",
    "UnmaskShares",
    "quantize",
    "to_words",
]
