"""safetensors and .npz model files."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np
import pytest

from privagg_client import (
    ModelFileError,
    load_model,
    load_npz,
    load_safetensors,
    save_model,
    save_npz,
    save_safetensors,
)
from privagg_client.model_files import load_safetensors_with_metadata

TENSORS = {
    "weights": np.arange(12, dtype=np.float32).reshape(3, 4) / 3,
    "bias": np.array([-1.5, 0.0, 2.25], dtype=np.float32),
}


def test_safetensors_round_trip_keeps_names_order_values_and_metadata(tmp_path: Path) -> None:
    path = tmp_path / "m.safetensors"
    save_safetensors(path, TENSORS, metadata={"round": "3"})
    loaded, metadata = load_safetensors_with_metadata(path)
    assert list(loaded) == ["weights", "bias"]
    for name, array in TENSORS.items():
        np.testing.assert_array_equal(loaded[name], array)
        assert loaded[name].dtype == np.float32
    assert metadata == {"round": "3"}


def test_safetensors_layout_is_length_json_header_then_raw_little_endian_data(tmp_path: Path) -> None:
    path = tmp_path / "m.safetensors"
    save_safetensors(path, TENSORS)
    data = path.read_bytes()
    (n,) = struct.unpack("<Q", data[:8])
    assert (8 + n) % 8 == 0
    header = json.loads(data[8 : 8 + n])
    assert header["weights"] == {"dtype": "F32", "shape": [3, 4], "data_offsets": [0, 48]}
    assert header["bias"] == {"dtype": "F32", "shape": [3], "data_offsets": [48, 60]}
    assert data[8 + n :] == TENSORS["weights"].astype("<f4").tobytes() + TENSORS["bias"].astype("<f4").tobytes()


def test_safetensors_reads_a_file_written_elsewhere_with_f64_and_unpadded_header(tmp_path: Path) -> None:
    header = json.dumps(
        {"b": {"dtype": "F64", "shape": [2], "data_offsets": [8, 24]}, "a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}
    ).encode()
    body = np.array([1, 2], dtype="<f4").tobytes() + np.array([3, 4], dtype="<f8").tobytes()
    path = tmp_path / "x.safetensors"
    path.write_bytes(struct.pack("<Q", len(header)) + header + body)
    loaded = load_safetensors(path)
    assert list(loaded) == ["b", "a"]
    np.testing.assert_array_equal(loaded["a"], [1, 2])
    np.testing.assert_array_equal(loaded["b"], [3, 4])


@pytest.mark.parametrize(
    "header, body, message",
    [
        ({"a": {"dtype": "I64", "shape": [1], "data_offsets": [0, 8]}}, bytes(8), "dtype I64"),
        ({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 4]}}, bytes(4), "does not hold 2 F32"),
        ({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}, bytes(8), "4 bytes after the last tensor"),
        ({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}, bytes(2), "past the end"),
        ({"a": {"dtype": "F32", "shape": [1]}}, bytes(4), "invalid data_offsets"),
    ],
)
def test_safetensors_refuses_malformed_files(tmp_path: Path, header: dict, body: bytes, message: str) -> None:
    text = json.dumps(header).encode()
    path = tmp_path / "bad.safetensors"
    path.write_bytes(struct.pack("<Q", len(text)) + text + body)
    with pytest.raises(ModelFileError, match=message):
        load_safetensors(path)


def test_safetensors_refuses_a_header_length_beyond_the_file(tmp_path: Path) -> None:
    path = tmp_path / "bad.safetensors"
    path.write_bytes(struct.pack("<Q", 1 << 40) + b"{}")
    with pytest.raises(ModelFileError, match="header length"):
        load_safetensors(path)


def test_npz_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "m.npz"
    save_npz(path, TENSORS)
    loaded = load_npz(path)
    assert list(loaded) == ["weights", "bias"]
    np.testing.assert_array_equal(loaded["weights"], TENSORS["weights"])


def test_save_and_load_model_choose_the_format_by_extension(tmp_path: Path) -> None:
    for name in ("m.safetensors", "m.npz"):
        save_model(tmp_path / name, TENSORS)
        np.testing.assert_array_equal(load_model(tmp_path / name)["bias"], TENSORS["bias"])
    assert (tmp_path / "m.safetensors").read_bytes()[:8] != (tmp_path / "m.npz").read_bytes()[:8]
    with pytest.raises(ModelFileError, match="use a .safetensors or .npz extension"):
        save_model(tmp_path / "m.bin", TENSORS)
