"""The public records a job publishes: round announcements and released models."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from . import wire
from .errors import WireFormatError

if TYPE_CHECKING:
    import numpy.typing as npt


@dataclass(frozen=True)
class RoundAnnouncement:
    """Round ``round`` is open: train on the model of ``base_model_round`` and send the update
    before ``deadline_millis`` (epoch milliseconds, the broker's append time counts).

    With ``budget_spent`` it is the job's last record instead: the privacy budget cannot pay for
    ``round``, so neither it nor any later round opens, and ``base_model_round`` is the final
    model (``deadline_millis`` is 0)."""

    job_id: str
    round: int
    base_model_round: int
    deadline_millis: int
    budget_spent: bool = False

    @property
    def deadline(self) -> datetime:
        """The deadline as an aware UTC datetime."""
        return datetime.fromtimestamp(self.deadline_millis / 1000, tz=timezone.utc)

    def seconds_left(self, now: float | None = None) -> float:
        """Seconds until the deadline by this machine's clock (negative once it passed)."""
        return self.deadline_millis / 1000 - (time.time() if now is None else now)

    @classmethod
    def decode(cls, value: bytes) -> RoundAnnouncement:
        """Reads a single-object-encoded ``RoundAnnouncement``."""
        d = wire.decode("RoundAnnouncement", value)
        return cls(
            d["jobId"],
            d["round"],
            d["baseModelRound"],
            d["deadlineMillis"],
            bool(d.get("budgetSpent", False)),
        )


@dataclass(frozen=True)
class PrivacyStatement:
    """The differential-privacy guarantee that holds for a released model and all before it.

    ``epsilon`` is spent so far (``inf`` when the noise multiplier is 0); ``noise_multiplier`` is
    the noise std over ``clip_norm``; ``charged_noise_multiplier`` is what the accountant charges
    per round (``None`` in models written before privagg stated it). ``correlated_noise`` is set
    for a job with correlated noise (``privacy.mechanism: blt``), else ``None``;
    ``secure_aggregation`` for a job that aggregates securely: its ``delta`` is the one that holds
    for ``epsilon`` once rounds that failed to unmask are counted.
    """

    epsilon: float
    delta: float
    accountant: str
    noise_multiplier: float
    clip_norm: float
    sampling_rate: float
    sampling_mode: str
    noise_source: str
    adjacency: str
    budget_epsilon: float
    charged_noise_multiplier: float | None
    correlated_noise: CorrelatedNoise | None = None
    secure_aggregation: SecureAggregation | None = None

    @property
    def is_private(self) -> bool:
        """False when epsilon is infinite or the noise is not secret (``seeded`` or ``zero``)."""
        return math.isfinite(self.epsilon) and self.noise_source not in ("seeded", "zero")

    def __str__(self) -> str:
        blt = f", {self.correlated_noise}" if self.correlated_noise is not None else ""
        if self.secure_aggregation is not None:
            blt += f", {self.secure_aggregation}"
        return (
            f"epsilon {self.epsilon:.6g} at delta {self.delta:g} ({self.accountant}, "
            f"noise multiplier {self.noise_multiplier:g}, clipNorm {self.clip_norm:g}, "
            f"sampling {self.sampling_mode} at {self.sampling_rate:g}, {self.adjacency}, "
            f"noise {self.noise_source}, budget {self.budget_epsilon:g}{blt})"
        )


@dataclass(frozen=True)
class CorrelatedNoise:
    """Correlated noise's figures in a model's privacy statement: the BLT (``theta``,
    ``omega``) over ``planned_rounds`` rounds, each client at most ``max_participations`` times
    with round numbers at least ``min_separation`` apart; every release so far together is one
    Gaussian mechanism with noise multiplier ``prefix_noise_multiplier``."""

    mechanism: str
    planned_rounds: int
    min_separation: int
    max_participations: int
    theta: tuple[float, ...]
    omega: tuple[float, ...]
    noise_multiplier: float
    planned_sensitivity: float
    sensitivity: float
    prefix_noise_multiplier: float

    def __str__(self) -> str:
        return (
            f"{self.mechanism} over {self.planned_rounds} rounds, at most "
            f"{self.max_participations} per client {self.min_separation} apart, "
            f"prefix noise multiplier {self.prefix_noise_multiplier:g}"
        )


@dataclass(frozen=True)
class SecureAggregation:
    """What secure rounds add to a statement's delta: each of ``rounds`` rounds may be released
    with noise alone where the ledger accounts a sum with probability at most
    ``failure_probability_per_round``, so ``delta`` = min(1, delta + (1 + e^epsilon) rounds
    beta) is the delta that holds for the statement's epsilon."""

    failure_probability_per_round: float
    rounds: int
    delta: float

    def __str__(self) -> str:
        return (
            f"secure aggregation: delta {self.delta:g} with {self.rounds} rounds' unmasking "
            f"failures of at most {self.failure_probability_per_round:.3g} each"
        )


@dataclass(frozen=True)
class GlobalModel:
    """A released model: its tensors (NumPy float32 arrays, in the model's order) and its
    privacy statement. Round 0 is the initial model."""

    job_id: str
    round: int
    tensors: dict[str, npt.NDArray[np.float32]]
    privacy: PrivacyStatement
    statistics: dict[str, Any] | None = None
    """A statistics job's release as the record states it (``count``, ``features`` with
    ``mean``, ``histogram``, ``quantiles`` ..., each ``{value, std, lower, upper}``, and
    ``blocks``); None for a model."""

    @classmethod
    def decode(cls, value: bytes) -> GlobalModel:
        """Reads a single-object-encoded ``GlobalModel`` of the current or an earlier schema."""
        d = wire.decode("GlobalModel", value)
        tensors: dict[str, npt.NDArray[np.float32]] = {}
        for t in d["tensors"]:
            shape = tuple(t["shape"])
            data = t["data"]
            if any(n < 0 for n in shape):
                raise WireFormatError(f"tensor '{t['name']}' has a negative dimension: {list(shape)}")
            if t["name"] in tensors:
                raise WireFormatError(f"tensor '{t['name']}' appears twice in the model")
            if len(data) != 4 * math.prod(shape):
                raise WireFormatError(
                    f"tensor '{t['name']}' of shape {list(shape)} needs {4 * math.prod(shape)} "
                    f"bytes, has {len(data)}"
                )
            tensors[t["name"]] = np.frombuffer(data, dtype="<f4").reshape(shape).copy()
        p = d["privacy"]
        privacy = PrivacyStatement(
            epsilon=p["epsilon"],
            delta=p["delta"],
            accountant=p["accountant"],
            noise_multiplier=p["noiseMultiplier"],
            clip_norm=p["clipNorm"],
            sampling_rate=p["samplingRate"],
            sampling_mode=p["samplingMode"],
            noise_source=p["noiseSource"],
            adjacency=p["adjacency"],
            budget_epsilon=p["budgetEpsilon"],
            charged_noise_multiplier=p.get("chargedNoiseMultiplier"),
            correlated_noise=_correlated(p.get("correlatedNoise")),
            secure_aggregation=_secure(p.get("secureAggregation")),
        )
        return cls(d["jobId"], d["round"], tensors, privacy, d.get("statistics"))

    def state_dict(self) -> dict[str, Any]:
        """The tensors as a PyTorch ``state_dict`` (needs torch)."""
        from .torch_support import to_state_dict

        return to_state_dict(self.tensors)

    def save(self, path: str | Path) -> None:
        """Writes the tensors to ``.safetensors`` (with the round and epsilon as metadata) or
        ``.npz``, by the file's extension."""
        from .model_files import save_model

        save_model(
            path,
            self.tensors,
            metadata={
                "jobId": self.job_id,
                "round": str(self.round),
                "epsilon": repr(self.privacy.epsilon),
                "delta": repr(self.privacy.delta),
            },
        )


def _correlated(c: dict[str, Any] | None) -> CorrelatedNoise | None:
    if c is None:
        return None
    return CorrelatedNoise(
        mechanism=c["mechanism"],
        planned_rounds=c["plannedRounds"],
        min_separation=c["minSeparation"],
        max_participations=c["maxParticipations"],
        theta=tuple(c["theta"]),
        omega=tuple(c["omega"]),
        noise_multiplier=c["noiseMultiplier"],
        planned_sensitivity=c["plannedSensitivity"],
        sensitivity=c["sensitivity"],
        prefix_noise_multiplier=c["prefixNoiseMultiplier"],
    )


def _secure(s: dict[str, Any] | None) -> SecureAggregation | None:
    if s is None:
        return None
    return SecureAggregation(s["failureProbabilityPerRound"], s["rounds"], s["delta"])
