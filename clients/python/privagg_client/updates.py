"""Client updates: checked against the job's model, then encoded as a ``ClientUpdate`` record."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from . import wire
from .errors import JobConfigError, NonFiniteValuesError, RecordTooLargeError, TensorShapeError
from .job import JobConfig, TensorSpec

if TYPE_CHECKING:
    import numpy.typing as npt

FLOAT32_LE = np.dtype("<f4")


def _describe(job: JobConfig) -> str:
    return ", ".join(f"{t.name} {list(t.shape)}" for t in job.tensors)


def to_numpy(value: Any) -> npt.NDArray[Any]:
    """An array of ``value``: a NumPy array, anything array-like, or a PyTorch tensor (detached
    and moved to the CPU)."""
    if hasattr(value, "detach") and hasattr(value, "cpu"):  # a torch.Tensor, without importing torch
        value = value.detach().cpu().numpy()
    return np.asarray(value)


def check_update(
    job: JobConfig, update: Mapping[str, Any]
) -> list[tuple[TensorSpec, npt.NDArray[np.float32]]]:
    """The update's tensors in the model's order, as C-contiguous little-endian float32 arrays.

    Raises :class:`TensorShapeError` naming the tensor and its expected shape when a tensor is
    missing, unknown or of another shape, and :class:`NonFiniteValuesError` for NaN or infinity.
    """
    if not isinstance(update, Mapping):
        raise TensorShapeError(
            f"an update must map tensor names to arrays ({_describe(job)}), was {type(update).__name__}"
        )
    expected = job.shapes
    unknown = [name for name in update if name not in expected]
    if unknown:
        raise TensorShapeError(
            f"the update has tensor '{unknown[0]}', which is not in job {job.job_id}'s model "
            f"({_describe(job)})",
            tensor=str(unknown[0]),
        )
    out = []
    for spec in job.tensors:
        if spec.name not in update:
            raise TensorShapeError(
                f"the update lacks tensor '{spec.name}' (shape {list(spec.shape)}); "
                f"job {job.job_id}'s model is {_describe(job)}",
                tensor=spec.name,
                expected_shape=spec.shape,
            )
        array = to_numpy(update[spec.name])
        if array.shape != spec.shape:
            raise TensorShapeError(
                f"tensor '{spec.name}' has shape {list(array.shape)}, "
                f"job {job.job_id}'s model needs {list(spec.shape)}",
                tensor=spec.name,
                expected_shape=spec.shape,
                actual_shape=array.shape,
            )
        if not np.issubdtype(array.dtype, np.number) or np.iscomplexobj(array):
            raise TensorShapeError(
                f"tensor '{spec.name}' holds {array.dtype} values, not real numbers",
                tensor=spec.name,
                expected_shape=spec.shape,
            )
        with np.errstate(over="ignore"):  # too large for float32: caught as infinite below
            values = np.ascontiguousarray(array, dtype=FLOAT32_LE)
        if not np.isfinite(values).all():
            bad = int(np.size(values) - np.count_nonzero(np.isfinite(values)))
            raise NonFiniteValuesError(
                f"tensor '{spec.name}' holds {bad} NaN or infinite values (as float32); "
                "the job would reject the update"
            )
        out.append((spec, values))
    return out


def _utf8(text: str, what: str) -> bytes:
    """``text`` as UTF-8, or a clear error for strings no UTF-8 can carry (lone surrogates)."""
    if not isinstance(text, str):
        raise JobConfigError(f"{what} must be a string, was {text!r}")
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as e:
        raise JobConfigError(f"{what} {text!r} is not valid Unicode text: {e.reason}") from e


def _long_bytes(n: int) -> int:
    """Bytes of Avro's zig-zag varint for ``n``."""
    z = (n << 1) ^ (n >> 63)
    size = 1
    while z > 0x7F:
        z >>= 7
        size += 1
    return size


def _metadata_bytes(metadata: Mapping[str, str] | None) -> int:
    """The encoded size of the metadata field as the job measures it: union index and map."""
    if metadata is None:
        return 1
    size = 1 + (_long_bytes(len(metadata)) if metadata else 0) + 1
    for key, value in metadata.items():
        for part in (_utf8(key, "metadata key"), _utf8(value, f"metadata value of {key!r}")):
            size += _long_bytes(len(part)) + len(part)
    return size


def check_sender(job: JobConfig, round_number: int, client_id: str) -> None:
    """Raises :class:`JobConfigError` for a negative round number or a client id the job would
    not take (empty, or longer than its ``maxClientIdBytes``)."""
    if not (
        isinstance(round_number, int) and not isinstance(round_number, bool) and round_number >= 0
    ):
        raise JobConfigError(f"round must be a non-negative integer, was {round_number!r}")
    if not isinstance(client_id, str) or not client_id:
        raise JobConfigError(f"client id must be a non-empty string, was {client_id!r}")
    id_bytes = len(_utf8(client_id, "client id"))
    if id_bytes > job.max_client_id_bytes:
        raise JobConfigError(
            f"client id is {id_bytes} UTF-8 bytes, job {job.job_id} takes at most "
            f"{job.max_client_id_bytes} (maxClientIdBytes)"
        )


def encode_update(
    job: JobConfig,
    round_number: int,
    client_id: str,
    update: Mapping[str, Any],
    metadata: Mapping[str, str] | None = None,
) -> bytes:
    """The bytes of a ``ClientUpdate``: what :meth:`PrivaggClient.send_update` sends as the value.

    Byte for byte what the Java ``dev.privagg.client.ClientUpdates.encode`` writes for the same
    values. Tensor data goes in as raw float32 little-endian bytes, row-major.
    """
    check_sender(job, round_number, client_id)
    size = _metadata_bytes(metadata)
    if size > job.max_metadata_bytes:
        raise JobConfigError(
            f"metadata is {size} encoded bytes, job {job.job_id} takes at most "
            f"{job.max_metadata_bytes} (maxMetadataBytes)"
        )
    tensors = [
        {"name": spec.name, "shape": list(spec.shape), "data": values.tobytes()}
        for spec, values in check_update(job, update)
    ]
    value = wire.encode(
        "ClientUpdate",
        {
            "jobId": job.job_id,
            "round": round_number,
            "clientId": client_id,
            "tensors": tensors,
            "metadata": None if metadata is None else dict(metadata),
        },
    )
    if len(value) > job.max_record_bytes:
        raise RecordTooLargeError(
            f"the update is {len(value)} bytes, job {job.job_id} takes at most "
            f"{job.max_record_bytes} (maxRecordBytes)"
        )
    return value
