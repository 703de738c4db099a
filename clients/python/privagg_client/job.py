"""What a client needs to know about a training job: its id, its model's tensors and its topics.

Read it from the job's spec YAML (:meth:`JobConfig.from_spec`, the same file the operator runs
the job with) or give it explicitly (:class:`JobConfig` with a mapping of tensor names to shapes).
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, timezone
from pathlib import Path
from statistics import NormalDist
from typing import Any, Union

from .errors import JobConfigError
from .secure.thresholds import ADVERSARIES, ThreatModel
from .spec_keys import check_spec_keys
from .statistics import StatisticsQuery

_JOB_ID = re.compile(r"[A-Za-z0-9._-]+")

MAX_PARAMETERS = 1 << 27
"""The largest model a privagg job serves, in parameters (as the Java ``JobSpec`` checks)."""

DEFAULT_MAX_CLIENT_ID_BYTES = 256
DEFAULT_MAX_METADATA_BYTES = 4096


@dataclass(frozen=True)
class TensorSpec:
    """One named tensor of the model: float32 values in row-major order."""

    name: str
    shape: tuple[int, ...]

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise JobConfigError(f"a tensor name must be a non-empty string, was {self.name!r}")
        shape = tuple(self.shape)
        if not shape or not all(
            isinstance(d, int) and not isinstance(d, bool) and d > 0 for d in shape
        ):
            raise JobConfigError(
                f"tensor '{self.name}' needs a shape of positive integers, was {list(shape)}"
            )
        object.__setattr__(self, "shape", shape)

    @property
    def size(self) -> int:
        """Number of values."""
        return math.prod(self.shape)


@dataclass(frozen=True)
class Topics:
    """Kafka topic names of a job (the spec's ``topics`` section; defaults as in privagg)."""

    updates: str = "privagg.updates"
    models: str = "privagg.models"
    rounds: str = "privagg.rounds"
    secure: str = "privagg.secure"
    """The job's secure-aggregation phase messages (read with ``read_committed``)."""


AGGREGATION_MODES = ("plaintext", "secure")


@dataclass(frozen=True)
class Aggregation:
    """How the job sums a round's updates (the spec's ``aggregation`` section).

    ``mode``: ``plaintext`` (the default) or ``secure`` (docs/secure-aggregation.md: the job
    learns only the sum). ``max_dropout_rate`` and ``adversarial_client_rate`` are the fractions
    of the roster that may drop out before unmasking and that may collude with the server,
    from which the job chooses the neighbour graph (None: the spec leaves them to the job)."""

    mode: str = "plaintext"
    max_dropout_rate: float | None = None
    adversarial_client_rate: float | None = None
    adversary: str = "semi-malicious-server"
    distributed: DistributedNoiseFloor | None = None
    """With ``privacy.mechanism: distributed-discrete-gaussian``: what the job's announced noise
    shares must at least give (None: the job adds the noise itself)."""

    def __post_init__(self) -> None:
        if self.mode not in AGGREGATION_MODES:
            raise JobConfigError(
                f"aggregation.mode must be one of {', '.join(AGGREGATION_MODES)}, was {self.mode!r}"
            )
        for key, rate in (
            ("maxDropoutRate", self.max_dropout_rate),
            ("adversarialClientRate", self.adversarial_client_rate),
        ):
            if rate is not None and not (
                isinstance(rate, (int, float)) and not isinstance(rate, bool) and 0 <= rate < 1
            ):
                raise JobConfigError(f"aggregation.{key} must be in [0, 1), was {rate!r}")
        if self.adversary not in ADVERSARIES:
            raise JobConfigError(
                f"aggregation.adversary must be one of {', '.join(ADVERSARIES)}, "
                f"was {self.adversary!r}"
            )

    @property
    def threat(self) -> ThreatModel:
        """The rates and adversary a secure round's roster is held to (the job's defaults, 0.1
        each, where the spec leaves them out)."""
        return ThreatModel(
            0.1 if self.adversarial_client_rate is None else self.adversarial_client_rate,
            0.1 if self.max_dropout_rate is None else self.max_dropout_rate,
            self.adversary,
        )

    @property
    def secure(self) -> bool:
        """True in secure mode."""
        return self.mode == "secure"


@dataclass(frozen=True)
class DistributedNoiseFloor:
    """What a client checks a round's announced distributed noise against before masking:
    ``fewest_honest_inputs`` (the fewest honest clients an unmasked round holds, from
    ``rounds.minimumCohort`` and the rates) and ``noise_multiplier`` (the spec's
    ``privacy.noiseMultiplier``, or the one given to :meth:`JobConfig.from_spec` for a spec
    planned from ``targetEpsilon``; None: the client refuses to mask, having nothing to check the
    job's plan against)."""

    fewest_honest_inputs: int
    noise_multiplier: float | None


# Q^-1(2^-40), as the Java UnmaskingGate.DEVIATE.
_GATE_DEVIATE = NormalDist().inv_cdf(1 - 2.0**-40)


def _distributed_floor(
    root: Mapping[str, Any], aggregation: Aggregation, noise_multiplier: float | None
) -> DistributedNoiseFloor | None:
    privacy = root.get("privacy")
    if not isinstance(privacy, Mapping) or privacy.get("mechanism") != "distributed-discrete-gaussian":
        return None
    rounds = root.get("rounds") if isinstance(root.get("rounds"), Mapping) else {}
    cohort = rounds.get("minimumCohort") if isinstance(rounds, Mapping) else None
    if not isinstance(cohort, Mapping):
        raise JobConfigError("distributed noise needs rounds.minimumCohort {count, noiseStd}")
    count, std = float(cohort["count"]), float(cohort["noiseStd"])
    fewest = math.floor(count + 1 - _GATE_DEVIATE * std)
    threat = aggregation.threat
    roster = (fewest + 1) / (1 - threat.max_dropout_rate)
    honest = fewest - math.floor(threat.adversarial_client_rate * roster + 1e-12)
    z = privacy.get("noiseMultiplier", noise_multiplier)
    return DistributedNoiseFloor(honest, None if z is None else float(z))


TensorsArg = Union[Mapping[str, Sequence[int]], Iterable[TensorSpec]]


@dataclass(frozen=True, init=False)
class JobConfig:
    """A training job as a client sees it.

    ``tensors`` may be given as a mapping ``{name: shape}`` (in the model's order) or as
    :class:`TensorSpec` objects; the order is the order updates are encoded in.
    ``max_record_bytes`` defaults to the job's default, twice the model's bytes plus 1 MiB.
    """

    job_id: str
    tensors: tuple[TensorSpec, ...]
    topics: Topics = field(default_factory=Topics)
    aggregation: Aggregation = field(default_factory=Aggregation)
    max_record_bytes: int = 0
    max_client_id_bytes: int = DEFAULT_MAX_CLIENT_ID_BYTES
    max_metadata_bytes: int = DEFAULT_MAX_METADATA_BYTES
    statistics: StatisticsQuery | None = None
    """A statistics job's query (its spec's ``statistics`` section), whose blocks are the
    tensors; None for model training."""
    start_at_millis: int | None = None
    """The spec's ``rounds.startAt`` (epoch milliseconds): when a new job's round 1 opens, which
    :meth:`PrivaggClient.wait_for_round` waits for; None without one."""

    def __init__(
        self,
        job_id: str,
        tensors: TensorsArg,
        topics: Topics | None = None,
        max_record_bytes: int | None = None,
        max_client_id_bytes: int = DEFAULT_MAX_CLIENT_ID_BYTES,
        max_metadata_bytes: int = DEFAULT_MAX_METADATA_BYTES,
        aggregation: Aggregation | None = None,
        statistics: StatisticsQuery | None = None,
        start_at_millis: int | None = None,
    ) -> None:
        if not isinstance(job_id, str) or not _JOB_ID.fullmatch(job_id):
            raise JobConfigError(
                f"jobId must be letters, digits, '.', '_' or '-', was {job_id!r}"
            )
        if isinstance(tensors, Mapping):
            specs = tuple(TensorSpec(name, tuple(shape)) for name, shape in tensors.items())
        else:
            specs = tuple(tensors)
        if not specs:
            raise JobConfigError("the model needs at least one tensor")
        names = [t.name for t in specs]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise JobConfigError(f"tensor names must be unique, repeated: {duplicates}")
        parameters = sum(t.size for t in specs)
        if parameters > MAX_PARAMETERS:
            raise JobConfigError(
                f"the model has {parameters} parameters, at most {MAX_PARAMETERS} are allowed"
            )
        if max_record_bytes is None:
            max_record_bytes = 2 * 4 * parameters + (1 << 20)
        if not (isinstance(max_record_bytes, int) and max_record_bytes > 0):
            raise JobConfigError(f"maxRecordBytes must be a positive integer, was {max_record_bytes!r}")
        if not (isinstance(max_client_id_bytes, int) and max_client_id_bytes > 0):
            raise JobConfigError(
                f"maxClientIdBytes must be a positive integer, was {max_client_id_bytes!r}"
            )
        object.__setattr__(self, "job_id", job_id)
        object.__setattr__(self, "tensors", specs)
        object.__setattr__(self, "topics", topics or Topics())
        object.__setattr__(self, "aggregation", aggregation or Aggregation())
        object.__setattr__(self, "max_record_bytes", max_record_bytes)
        if not (isinstance(max_metadata_bytes, int) and max_metadata_bytes >= 0):
            raise JobConfigError(
                f"maxMetadataBytes must be a non-negative integer, was {max_metadata_bytes!r}"
            )
        object.__setattr__(self, "max_client_id_bytes", max_client_id_bytes)
        object.__setattr__(self, "max_metadata_bytes", max_metadata_bytes)
        object.__setattr__(self, "statistics", statistics)
        object.__setattr__(self, "start_at_millis", start_at_millis)

    @property
    def parameters(self) -> int:
        """Number of values in the model."""
        return sum(t.size for t in self.tensors)

    @property
    def shapes(self) -> dict[str, tuple[int, ...]]:
        """Tensor names to shapes, in the model's order."""
        return {t.name: t.shape for t in self.tensors}

    @classmethod
    def from_spec(cls, path: str | Path, noise_multiplier: float | None = None) -> JobConfig:
        """Reads the job id, tensors, topics, record limits and aggregation mode from a privagg
        job spec (YAML).

        A key the job's spec reader does not know is refused as ``privagg run`` refuses it,
        naming the key, its section and the known key it resembles (a misspelt
        ``rounds.expectedClient`` would otherwise pass here and stop the job). The values of the
        sections a client does not use (rounds, privacy, ...) are the job's to check, but for
        distributed noise: ``noise_multiplier`` is what the job's announced noise shares are
        checked against when the spec plans from ``targetEpsilon`` (else its
        ``privacy.noiseMultiplier``).
        """
        try:
            import yaml
        except ImportError as e:  # pragma: no cover - python3-yaml is a dependency
            raise JobConfigError("reading a spec needs PyYAML (Debian: python3-yaml)") from e
        path = Path(path)
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as e:
            raise JobConfigError(f"cannot read the job spec {path}: {e}") from e
        try:
            root = yaml.safe_load(text)
        except yaml.YAMLError as e:
            raise JobConfigError(f"{path} is not valid YAML: {e}") from e
        return cls.from_spec_dict(root, source=str(path), noise_multiplier=noise_multiplier)

    @classmethod
    def from_spec_dict(
        cls, root: Any, source: str = "spec", noise_multiplier: float | None = None
    ) -> JobConfig:
        """Like :meth:`from_spec`, from an already parsed spec."""
        if not isinstance(root, Mapping):
            raise JobConfigError(f"{source}: a job spec must be a YAML mapping")
        check_spec_keys(root, source)
        job_id = root.get("jobId")
        if job_id is None:
            raise JobConfigError(f"{source}: jobId is missing")
        statistics = None
        model = root.get("model")
        specs = []
        if "statistics" in root:
            if model is not None:
                raise JobConfigError(
                    f"{source}: statistics and model are both set: a job either trains a model "
                    "or releases statistics; remove one"
                )
            statistics = StatisticsQuery.from_spec_section(root["statistics"], source)
            specs = [TensorSpec(b.name, (b.size,)) for b in statistics.blocks()]
            model = {"tensors": []}
        if not isinstance(model, Mapping) or not isinstance(model.get("tensors"), list):
            raise JobConfigError(
                f"{source}: model.tensors must be a list of {{name, shape}} "
                "(or, for a statistics job, statistics.features a list of features)"
            )
        for i, t in enumerate(model["tensors"]):
            if not isinstance(t, Mapping) or "name" not in t or not isinstance(t.get("shape"), list):
                raise JobConfigError(
                    f"{source}: model.tensors[{i}] must be {{name: ..., shape: [...]}}, was {t!r}"
                )
            specs.append(TensorSpec(str(t["name"]), tuple(t["shape"])))
        topics_section = root.get("topics") or {}
        if not isinstance(topics_section, Mapping):
            raise JobConfigError(f"{source}: topics must be a mapping")
        defaults = Topics()
        topics = Topics(
            updates=str(topics_section.get("updates", defaults.updates)),
            models=str(topics_section.get("models", defaults.models)),
            rounds=str(topics_section.get("rounds", defaults.rounds)),
            secure=str(topics_section.get("secure", defaults.secure)),
        )
        return cls(
            str(job_id),
            specs,
            topics=topics,
            max_record_bytes=root.get("maxRecordBytes"),
            max_client_id_bytes=root.get("maxClientIdBytes", DEFAULT_MAX_CLIENT_ID_BYTES),
            max_metadata_bytes=root.get("maxMetadataBytes", DEFAULT_MAX_METADATA_BYTES),
            aggregation=_aggregation(root.get("aggregation"), source, root, noise_multiplier),
            statistics=statistics,
            start_at_millis=_start_at(root.get("rounds"), source),
        )


def _start_at(rounds: Any, source: str) -> int | None:
    """``rounds.startAt`` as epoch milliseconds, read as the job reads it: an ISO-8601 instant
    with its zone in quotes, or unquoted (a YAML timestamp; one without a zone is UTC), in
    [2000, 2100); none when absent or empty."""
    if not isinstance(rounds, Mapping) or rounds.get("startAt") is None:
        return None
    value = rounds["startAt"]
    millis: int | None = None
    if isinstance(value, int) and not isinstance(value, bool):
        millis = value  # what the job's YAML reader makes of a timestamp
    elif isinstance(value, datetime):
        aware = value if value.tzinfo is not None else value.replace(tzinfo=timezone.utc)
        millis = round(aware.timestamp() * 1000)
    elif isinstance(value, date):
        millis = round(datetime(value.year, value.month, value.day, tzinfo=timezone.utc)
                       .timestamp() * 1000)
    elif isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            parsed = None
        if parsed is not None and parsed.tzinfo is not None:
            millis = round(parsed.timestamp() * 1000)
    if millis is None:
        raise JobConfigError(
            f"{source}: rounds.startAt must be an instant in UTC such as 2026-12-01T09:00:00Z "
            f"(a quoted one needs its zone), was {value!r}"
        )
    if not _EARLIEST_START <= millis < _LATEST_START:
        raise JobConfigError(
            f"{source}: rounds.startAt must be in [2000-01-01T00:00:00Z, 2100-01-01T00:00:00Z), "
            f"was {datetime.fromtimestamp(millis / 1000, tz=timezone.utc).isoformat()}"
        )
    return millis


# rounds.startAt's range, the job's: a typo in the year fails rather than parking clients.
_EARLIEST_START = 946_684_800_000  # 2000-01-01T00:00:00Z
_LATEST_START = 4_102_444_800_000  # 2100-01-01T00:00:00Z



def _aggregation(
    section: Any, source: str, root: Mapping[str, Any], noise_multiplier: float | None
) -> Aggregation:
    """The spec's ``aggregation`` section; plaintext when it is absent."""
    if section is None:
        return Aggregation()
    if not isinstance(section, Mapping):
        raise JobConfigError(f"{source}: aggregation must be a mapping, was {section!r}")
    aggregation = Aggregation(
        mode=str(section.get("mode", "plaintext")),
        max_dropout_rate=section.get("maxDropoutRate"),
        adversarial_client_rate=section.get("adversarialClientRate"),
        adversary=str(section.get("adversary", "semi-malicious-server")),
    )
    try:
        floor = _distributed_floor(root, aggregation, noise_multiplier)
    except (KeyError, TypeError, ValueError) as e:
        raise JobConfigError(f"{source}: {e}") from e
    return dataclasses.replace(aggregation, distributed=floor) if floor else aggregation
