"""Round trip of privagg's model files through NumPy and PyTorch (ModelFilesRoundTripIT).

  roundtrip.py check DIR   reads DIR/java.safetensors and DIR/java.npz, written by privagg, and
                           checks every tensor against DIR/java-expected.json (exact float32)
  roundtrip.py write DIR   writes DIR/python.npz (numpy.savez), DIR/python-compressed.npz
                           (numpy.savez_compressed, one Fortran-ordered array), DIR/torch.safetensors
                           (a torch state_dict, F32), DIR/torch-mixed.safetensors (F16, BF16, F64)
                           and DIR/python-expected.json with the float32 values privagg must read

There is no safetensors package here: the format (an 8-byte little-endian header length, a JSON
header, raw little-endian data) is read and written by the two functions below.
"""
import json
import struct
import sys

import numpy as np
import torch

DTYPES = {"F32": np.float32, "F64": np.float64, "F16": np.float16}


def read_safetensors(path):
    """name -> float32 numpy array, with the format's layout checks (contiguous, exact size)."""
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    assert n % 8 == 0, f"header length {n} is not padded to 8 bytes"
    header = json.loads(data[8 : 8 + n].decode("utf-8"))
    body = data[8 + n :]
    header.pop("__metadata__", None)
    end = 0
    out = {}
    for name, info in sorted(header.items(), key=lambda kv: kv[1]["data_offsets"]):
        begin, stop = info["data_offsets"]
        assert begin == end, f"{name}: offsets not contiguous"
        assert info["dtype"] == "F32", f"{name}: dtype {info['dtype']}"
        count = int(np.prod(info["shape"], dtype=np.int64))
        assert stop - begin == 4 * count, f"{name}: {stop - begin} bytes for {count} values"
        array = np.frombuffer(body, dtype="<f4", count=count, offset=begin).reshape(info["shape"])
        # PyTorch reads the same bytes (bytearray: frombuffer wants a writable buffer).
        tensor = torch.frombuffer(bytearray(body[begin:stop]), dtype=torch.float32)
        assert np.array_equal(tensor.numpy(), array.reshape(-1)), f"{name}: torch and numpy differ"
        out[name] = array
        end = stop
    assert end == len(body), f"{len(body) - end} bytes after the last tensor"
    return out


def write_safetensors(path, tensors, metadata=None):
    """Writes name -> torch tensor (contiguous, little-endian) in the safetensors layout."""
    names = {torch.float32: "F32", torch.float64: "F64", torch.float16: "F16", torch.bfloat16: "BF16"}
    header = {"__metadata__": metadata} if metadata else {}
    chunks = []
    offset = 0
    for name, t in tensors.items():
        t = t.detach().contiguous()
        raw = t.view(torch.int16).numpy().tobytes() if t.dtype == torch.bfloat16 else t.numpy().tobytes()
        header[name] = {"dtype": names[t.dtype], "shape": list(t.shape), "data_offsets": [offset, offset + len(raw)]}
        chunks.append(raw)
        offset += len(raw)
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for c in chunks:
            f.write(c)


def expected(tensors):
    return {name: {"shape": list(a.shape), "values": np.asarray(a, dtype=np.float32).reshape(-1).tolist()}
            for name, a in tensors.items()}


def check(directory):
    with open(f"{directory}/java-expected.json") as f:
        want = json.load(f)
    for kind, arrays in (
        ("safetensors", read_safetensors(f"{directory}/java.safetensors")),
        ("npz", dict(np.load(f"{directory}/java.npz"))),
    ):
        assert sorted(arrays) == sorted(want), f"{kind}: tensors {sorted(arrays)}, want {sorted(want)}"
        for name, w in want.items():
            got = arrays[name]
            assert got.dtype == np.float32, f"{kind} {name}: dtype {got.dtype}"
            assert list(got.shape) == w["shape"], f"{kind} {name}: shape {got.shape}, want {w['shape']}"
            same = np.array_equal(got.reshape(-1), np.array(w["values"], dtype=np.float32), equal_nan=True)
            assert same, f"{kind} {name}: values differ"
    print("python read java's safetensors and npz: equal")


def write(directory):
    torch.manual_seed(7)
    model = torch.nn.Sequential(torch.nn.Linear(5, 3), torch.nn.ReLU(), torch.nn.Linear(3, 2))
    state = {k.replace(".", "_"): v for k, v in model.state_dict().items()}
    write_safetensors(f"{directory}/torch.safetensors", state, {"format": "pt"})
    mixed = {
        "half": torch.tensor([1.0, -0.333251953125, 6.103515625e-05, 5.960464477539063e-08, 65504.0], dtype=torch.float16),
        "brain": torch.tensor([[3.140625, -1e30], [0.0, 1.5e-20]], dtype=torch.bfloat16),
        "double": torch.tensor([0.1, 1e-40, -2.5], dtype=torch.float64),
    }
    write_safetensors(f"{directory}/torch-mixed.safetensors", mixed)
    rng = np.random.default_rng(3)
    arrays = {
        "weights": rng.standard_normal((4, 3)).astype(np.float32),
        "bias": np.array([0.0, -0.0, 1e-38], dtype=np.float32),
        "scalar": np.float32(2.5),
    }
    np.savez(f"{directory}/python.npz", **arrays)
    compressed = {"fortran": np.asfortranarray(rng.standard_normal((3, 2, 4)).astype(np.float32)),
                  "wide": rng.standard_normal(5)}  # float64, converted by privagg
    np.savez_compressed(f"{directory}/python-compressed.npz", **compressed)
    result = {
        "torch.safetensors": expected({k: v.numpy() for k, v in state.items()}),
        "torch-mixed.safetensors": expected({k: v.float().numpy() for k, v in mixed.items()}),
        "python.npz": expected(arrays),
        "python-compressed.npz": expected({k: np.asarray(v, dtype=np.float32) for k, v in compressed.items()}),
    }
    with open(f"{directory}/python-expected.json", "w") as f:
        json.dump(result, f)
    print("python wrote npz and safetensors")


if __name__ == "__main__":
    {"check": check, "write": write}[sys.argv[1]](sys.argv[2])
