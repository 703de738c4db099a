"""Model files: safetensors and NumPy ``.npz``, mapping tensor names to float32 arrays.

safetensors is an 8-byte little-endian header length N, N bytes of JSON header (``{name:
{"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__": {str: str}}``, padded with
spaces), then the tensors' raw little-endian bytes. It is written here directly: Debian has no
package for it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Union

import numpy as np

from .errors import ModelFileError
from .updates import to_numpy

if TYPE_CHECKING:
    import numpy.typing as npt

_MAX_HEADER_BYTES = 100 * 1024 * 1024
_READ_DTYPES: dict[str, np.dtype[Any]] = {
    "F32": np.dtype("<f4"),
    "F64": np.dtype("<f8"),
    "F16": np.dtype("<f2"),
}

PathLike = Union[str, Path]


def save_safetensors(
    path: PathLike, tensors: Mapping[str, Any], metadata: Mapping[str, str] | None = None
) -> None:
    """Writes ``tensors`` (NumPy arrays or torch tensors) as float32 safetensors, in the order
    given. ``metadata`` values must be strings."""
    arrays = {name: np.ascontiguousarray(to_numpy(v), dtype="<f4") for name, v in tensors.items()}
    header: dict[str, Any] = {}
    if metadata:
        if not all(isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()):
            raise ModelFileError("safetensors metadata must map strings to strings")
        header["__metadata__"] = dict(metadata)
    offset = 0
    for name, array in arrays.items():
        if name == "__metadata__":
            raise ModelFileError("a tensor cannot be named __metadata__ in safetensors")
        header[name] = {
            "dtype": "F32",
            "shape": list(array.shape),
            "data_offsets": [offset, offset + array.nbytes],
        }
        offset += array.nbytes
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 8)  # the data starts 8-byte aligned, as safetensors writes it
    with open(path, "wb") as f:
        f.write(len(text).to_bytes(8, "little"))
        f.write(text)
        for array in arrays.values():
            f.write(array.tobytes())


def load_safetensors(path: PathLike) -> dict[str, npt.NDArray[np.float32]]:
    """Reads a safetensors file (F32, F16 or F64 tensors) as float32 arrays, in file order."""
    tensors, _ = load_safetensors_with_metadata(path)
    return tensors


def load_safetensors_with_metadata(
    path: PathLike,
) -> tuple[dict[str, npt.NDArray[np.float32]], dict[str, str]]:
    """:func:`load_safetensors`, plus the file's ``__metadata__``."""
    data = Path(path).read_bytes()
    if len(data) < 8:
        raise ModelFileError(f"{path}: too short for a safetensors file ({len(data)} bytes)")
    n = int.from_bytes(data[:8], "little")
    if not (2 <= n <= min(_MAX_HEADER_BYTES, len(data) - 8)):
        raise ModelFileError(f"{path}: header length {n} does not fit the file ({len(data)} bytes)")
    try:
        header = json.loads(data[8 : 8 + n].decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ModelFileError(f"{path}: the header is not JSON: {e}") from e
    if not isinstance(header, dict):
        raise ModelFileError(f"{path}: the header must be a JSON object")
    metadata = header.pop("__metadata__", None) or {}
    body = memoryview(data)[8 + n :]
    entries = sorted(header.items(), key=lambda kv: _offsets(path, kv)[0])
    out: dict[str, npt.NDArray[np.float32]] = {}
    expected_begin = 0
    for name, info in entries:
        begin, end = _offsets(path, (name, info))
        dtype = _READ_DTYPES.get(info.get("dtype"))
        if dtype is None:
            raise ModelFileError(
                f"{path}: tensor '{name}' has dtype {info.get('dtype')}, "
                f"readable are {sorted(_READ_DTYPES)}"
            )
        shape = info.get("shape")
        if not isinstance(shape, list) or not all(isinstance(d, int) and d >= 0 for d in shape):
            raise ModelFileError(f"{path}: tensor '{name}' has an invalid shape {shape!r}")
        if begin != expected_begin or end - begin != dtype.itemsize * math.prod(shape):
            raise ModelFileError(
                f"{path}: tensor '{name}' at bytes [{begin}, {end}) does not follow the previous "
                f"tensor or does not hold {math.prod(shape)} {info['dtype']} values"
            )
        if end > len(body):
            raise ModelFileError(f"{path}: tensor '{name}' ends past the end of the file")
        expected_begin = end
        out[name] = np.frombuffer(body[begin:end], dtype=dtype).astype("<f4").reshape(shape)
    if expected_begin != len(body):
        raise ModelFileError(f"{path}: {len(body) - expected_begin} bytes after the last tensor")
    order = list(header)
    return {name: out[name] for name in order}, dict(metadata)


def _offsets(path: PathLike, item: tuple[str, Any]) -> tuple[int, int]:
    name, info = item
    offsets = info.get("data_offsets") if isinstance(info, dict) else None
    if (
        not isinstance(offsets, list)
        or len(offsets) != 2
        or not all(isinstance(o, int) for o in offsets)
        or not 0 <= offsets[0] <= offsets[1]
    ):
        raise ModelFileError(f"{path}: tensor '{name}' has invalid data_offsets {offsets!r}")
    return offsets[0], offsets[1]


def save_npz(path: PathLike, tensors: Mapping[str, Any]) -> None:
    """Writes ``tensors`` as float32 arrays to a NumPy ``.npz`` file."""
    np.savez(path, **{name: np.asarray(to_numpy(v), dtype="<f4") for name, v in tensors.items()})


def load_npz(path: PathLike) -> dict[str, npt.NDArray[np.float32]]:
    """Reads a ``.npz`` file (no pickles) as float32 arrays, in file order."""
    try:
        with np.load(path, allow_pickle=False) as f:
            return {name: np.asarray(f[name], dtype="<f4") for name in f.files}
    except (ValueError, OSError) as e:
        raise ModelFileError(f"{path}: not a readable .npz file: {e}") from e


def save_model(
    path: PathLike, tensors: Mapping[str, Any], metadata: Mapping[str, str] | None = None
) -> None:
    """Writes ``.safetensors`` or ``.npz`` by the extension (``.npz`` files keep no metadata)."""
    suffix = Path(path).suffix
    if suffix == ".safetensors":
        save_safetensors(path, tensors, metadata)
    elif suffix == ".npz":
        save_npz(path, tensors)
    else:
        raise ModelFileError(f"{path}: use a .safetensors or .npz extension, not '{suffix}'")


def load_model(path: PathLike) -> dict[str, npt.NDArray[np.float32]]:
    """Reads ``.safetensors`` or ``.npz`` by the extension."""
    suffix = Path(path).suffix
    if suffix == ".safetensors":
        return load_safetensors(path)
    if suffix == ".npz":
        return load_npz(path)
    raise ModelFileError(f"{path}: use a .safetensors or .npz extension, not '{suffix}'")
