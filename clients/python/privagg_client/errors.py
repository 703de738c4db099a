"""Exceptions raised by the privagg client. All derive from :class:`PrivaggError`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .client import UpdateReceipt


class PrivaggError(Exception):
    """Base class of every error this package raises on purpose."""


class JobConfigError(PrivaggError, ValueError):
    """A job description (spec YAML or explicit arguments) is missing or has an invalid value."""


class PrivacyParameterError(PrivaggError, ValueError):
    """A client-side privacy parameter (a noise multiplier, an epsilon, a clip norm) out of range;
    the message names the parameter and what is allowed."""


class TensorShapeError(PrivaggError, ValueError):
    """An update's tensors do not match the job's model: a name is missing or unknown, or a shape
    differs. Raised before anything is sent."""

    def __init__(
        self,
        message: str,
        tensor: str | None = None,
        expected_shape: tuple[int, ...] | None = None,
        actual_shape: Sequence[int] | None = None,
    ) -> None:
        super().__init__(message)
        self.tensor = tensor
        self.expected_shape = expected_shape
        self.actual_shape = tuple(actual_shape) if actual_shape is not None else None


class NonFiniteValuesError(PrivaggError, ValueError):
    """An update holds NaN or infinite values (the job would reject it); raised before sending."""


class RecordTooLargeError(PrivaggError, ValueError):
    """An encoded update is larger than the job's ``maxRecordBytes``; raised before sending."""


class WireFormatError(PrivaggError, ValueError):
    """Bytes are not a single-object-encoded record this package can read (wrong marker, unknown
    schema fingerprint, or a body that does not decode)."""


class ModelFileError(PrivaggError, ValueError):
    """A safetensors or ``.npz`` model file is malformed or holds an unsupported data type."""


class KafkaClientError(PrivaggError):
    """Kafka refused a configuration or an operation (the message never contains secrets)."""


class SendError(KafkaClientError):
    """The broker did not acknowledge an update."""


class LateUpdateError(PrivaggError):
    """The broker appended an update at or after the deadline of its round's announcement: the
    job, which decides by the broker's append time, rejects it as stale. ``receipt`` says where
    and when it landed (:class:`~privagg_client.UpdateReceipt`)."""

    def __init__(self, message: str, receipt: UpdateReceipt) -> None:
        super().__init__(message)
        self.receipt = receipt


class BudgetSpentError(PrivaggError):
    """The job's privacy budget is spent: the round or model waited for will never come. The job
    said so publicly (``final_model_round`` is its last model; rounds from ``first_unopened`` on
    never open)."""

    def __init__(self, message: str, first_unopened: int, final_model_round: int) -> None:
        super().__init__(message)
        self.first_unopened = first_unopened
        self.final_model_round = final_model_round


class PrivaggTimeout(PrivaggError, TimeoutError):
    """A round announcement or model did not arrive in time."""


class ModelUnavailableError(PrivaggError):
    """A model was asked for that will never arrive: a later round's model was already read, so
    the asked-for one was compacted away or dropped from this client's memory."""


class SecureProtocolError(PrivaggError, ValueError):
    """A secure-aggregation message breaks the protocol (docs/secure-aggregation.md): a malformed
    roster, a roster without this client, a share addressed to another client, ..."""


class UnmaskRefused(SecureProtocolError):
    """A client refuses to sign the survivor list (phase 5) or to reveal shares (phase 6), as
    the protocol requires: it sent no masked input, is not among the survivors, too few of its
    neighbourhood or partners survived, the survivors are inconsistent with its Confirmed, it
    already signed another survivor list, or fewer than (n + A) / 2 + 1 survivors signed the
    list it signed."""


class SessionStateError(PrivaggError, RuntimeError):
    """A secure-aggregation session was driven out of order (a phase before the one it needs,
    or a masked input asked for twice)."""


class SecureRoundError(PrivaggError):
    """Secure aggregation of a round failed in one phase; ``phase`` (1 advertise, 2 share,
    3 receipt, 4 masked input, 5 consistency, 6 unmask) and the message say which and why."""

    def __init__(self, message: str, phase: int) -> None:
        super().__init__(message)
        self.phase = phase
