"""PyTorch ``state_dict`` conversions. torch is optional: it is imported only when used."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from .errors import PrivaggError, TensorShapeError
from .updates import to_numpy

if TYPE_CHECKING:
    import numpy.typing as npt


def _torch() -> Any:
    try:
        import torch
    except ImportError as e:
        raise PrivaggError("this needs PyTorch (Debian: python3-torch)") from e
    return torch


def to_state_dict(arrays: Mapping[str, Any]) -> dict[str, Any]:
    """NumPy arrays as a ``state_dict`` of float32 torch tensors (for ``model.load_state_dict``)."""
    torch = _torch()
    return {
        name: torch.from_numpy(np.array(a, dtype=np.float32, copy=True))
        for name, a in arrays.items()
    }


def from_state_dict(state_dict: Mapping[str, Any]) -> dict[str, npt.NDArray[np.float32]]:
    """A ``state_dict`` (or any mapping of tensors) as float32 NumPy arrays."""
    return {name: np.asarray(to_numpy(t), dtype=np.float32) for name, t in state_dict.items()}


def state_dict_delta(
    trained: Mapping[str, Any], base: Mapping[str, Any]
) -> dict[str, npt.NDArray[np.float32]]:
    """``trained - base`` per tensor, as float32 NumPy arrays: the update a client sends after
    training from the announced base model. Both must hold the same names and shapes."""
    if set(trained) != set(base):
        missing = sorted(set(base) - set(trained))
        extra = sorted(set(trained) - set(base))
        raise TensorShapeError(
            f"the trained and base state_dicts differ in tensors: missing {missing}, extra {extra}"
        )
    out: dict[str, npt.NDArray[np.float32]] = {}
    for name, t in trained.items():
        a = np.asarray(to_numpy(t), dtype=np.float32)
        b = np.asarray(to_numpy(base[name]), dtype=np.float32)
        if a.shape != b.shape:
            raise TensorShapeError(
                f"tensor '{name}' has shape {list(a.shape)} after training, {list(b.shape)} before",
                tensor=name,
                expected_shape=b.shape,
                actual_shape=a.shape,
            )
        out[name] = a - b
    return out
