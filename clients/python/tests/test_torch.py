"""PyTorch state_dicts in and out."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from privagg_client import (  # noqa: E402
    GlobalModel,
    JobConfig,
    TensorShapeError,
    encode_update,
    from_state_dict,
    load_safetensors,
    save_safetensors,
    state_dict_delta,
    to_state_dict,
)
from privagg_client import wire  # noqa: E402


def linear() -> "torch.nn.Module":
    torch.manual_seed(0)
    return torch.nn.Linear(3, 4)


def test_state_dict_round_trip_through_numpy_loads_into_the_module() -> None:
    module = linear()
    arrays = from_state_dict(module.state_dict())
    assert {k: v.shape for k, v in arrays.items()} == {"weight": (4, 3), "bias": (4,)}
    other = torch.nn.Linear(3, 4)
    other.load_state_dict(to_state_dict(arrays))
    for name, tensor in other.state_dict().items():
        assert torch.equal(tensor, module.state_dict()[name])


def test_state_dict_delta_is_trained_minus_base() -> None:
    module = linear()
    base = {k: v.clone() for k, v in module.state_dict().items()}
    with torch.no_grad():
        module.weight.add_(0.5)
    delta = state_dict_delta(module.state_dict(), base)
    np.testing.assert_allclose(delta["weight"], np.full((4, 3), 0.5), atol=1e-6)
    np.testing.assert_array_equal(delta["bias"], np.zeros(4))


def test_state_dict_delta_of_different_modules_names_the_difference() -> None:
    with pytest.raises(TensorShapeError, match=r"missing \['weight'\]"):
        state_dict_delta({"bias": torch.zeros(4)}, linear().state_dict())


def test_a_state_dict_encodes_like_the_same_numpy_arrays() -> None:
    module = linear()
    job = JobConfig("j", {"weight": [4, 3], "bias": [4]})
    assert encode_update(job, 1, "c", module.state_dict()) == encode_update(
        job, 1, "c", from_state_dict(module.state_dict())
    )


def test_a_state_dict_of_the_wrong_module_is_refused_with_the_expected_shape() -> None:
    job = JobConfig("j", {"weight": [4, 3], "bias": [4]})
    with pytest.raises(TensorShapeError, match=r"'weight' has shape \[3, 3\].*needs \[4, 3\]"):
        encode_update(job, 1, "c", torch.nn.Linear(3, 3).state_dict() | {"bias": torch.zeros(4)})


def test_released_model_loads_as_a_state_dict_and_saves_to_safetensors(tmp_path: Path) -> None:
    module = linear()
    arrays = from_state_dict(module.state_dict())
    value = wire.encode(
        "GlobalModel",
        {
            "jobId": "j",
            "round": 1,
            "tensors": [
                {"name": n, "shape": list(a.shape), "data": a.astype("<f4").tobytes()} for n, a in arrays.items()
            ],
            "privacy": {
                "epsilon": 2.0, "delta": 1e-5, "accountant": "rdp", "noiseMultiplier": 1.0, "clipNorm": 1.0,
                "samplingRate": 1.0, "samplingMode": "none", "noiseSource": "secure",
                "adjacency": "add-remove-one", "budgetEpsilon": 4.0, "chargedNoiseMultiplier": 1.0,
            },
        },
    )
    model = GlobalModel.decode(value)
    other = torch.nn.Linear(3, 4)
    other.load_state_dict(model.state_dict())
    assert torch.equal(other.weight, module.weight)
    model.save(tmp_path / "m.safetensors")
    save_safetensors(tmp_path / "direct.safetensors", module.state_dict())
    np.testing.assert_array_equal(load_safetensors(tmp_path / "m.safetensors")["weight"], arrays["weight"])
    assert load_safetensors(tmp_path / "direct.safetensors").keys() == {"weight", "bias"}
