"""The dataset, model and training step shared by the example's clients and its evaluator."""

from __future__ import annotations

import argparse
import gzip
from pathlib import Path
from typing import Dict, Tuple

import numpy as np
import torch
from torch import nn

DIGITS = Path(__file__).resolve().parents[2] / "data" / "digits.csv.gz"
TEST_FRACTION = 0.2
SPLIT_SEED = 42
HIDDEN = 16


def load_digits(path: Path = DIGITS) -> Tuple[Tuple[torch.Tensor, torch.Tensor], Tuple[torch.Tensor, torch.Tensor]]:
    """The 8x8 Digits (1,797 images, pixels 0..16 scaled to 0..1), split 80/20 into train and test
    by a fixed shuffle, so every process sees the same split."""
    with gzip.open(path, "rt") as f:
        rows = np.loadtxt(f, delimiter=",", dtype=np.float32)
    x, y = rows[:, :64] / 16.0, rows[:, 64].astype(np.int64)
    order = np.random.default_rng(SPLIT_SEED).permutation(len(rows))
    n_test = int(round(TEST_FRACTION * len(rows)))
    test, train = order[:n_test], order[n_test:]
    return (torch.from_numpy(x[train]), torch.from_numpy(y[train])), (
        torch.from_numpy(x[test]),
        torch.from_numpy(y[test]),
    )


def shard(train: Tuple[torch.Tensor, torch.Tensor], index: int, count: int) -> Tuple[torch.Tensor, torch.Tensor]:
    """Client ``index``'s share of the training set: every ``count``-th example (IID)."""
    x, y = train
    return x[index::count], y[index::count]


class DigitsMlp(nn.Module):
    """64 pixels -> 16 hidden units (ReLU) -> 10 classes: the tensors of digits-mlp.yaml."""

    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(64, HIDDEN)
        self.fc2 = nn.Linear(HIDDEN, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(torch.relu(self.fc1(x)))


def model_from(tensors: Dict[str, np.ndarray]) -> DigitsMlp:
    """A DigitsMlp holding a released model's tensors."""
    model = DigitsMlp()
    model.load_state_dict({k: torch.from_numpy(np.array(v)) for k, v in tensors.items()})
    return model


def train_locally(
    model: nn.Module, data: Tuple[torch.Tensor, torch.Tensor], epochs: int, lr: float, seed: int, batch: int = 16
) -> None:
    """Plain minibatch SGD on the client's own shard (no sample-level privacy)."""
    x, y = data
    generator = torch.Generator().manual_seed(seed)
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    model.train()
    for _ in range(epochs):
        for chunk in torch.randperm(len(x), generator=generator).split(batch):
            optimizer.zero_grad()
            nn.functional.cross_entropy(model(x[chunk]), y[chunk]).backward()
            optimizer.step()


def accuracy(model: nn.Module, data: Tuple[torch.Tensor, torch.Tensor]) -> float:
    model.eval()
    with torch.no_grad():
        x, y = data
        return float((model(x).argmax(dim=1) == y).float().mean())


def add_training_options(parser: argparse.ArgumentParser) -> None:
    """Local training's options, the same for the launcher and the client processes."""
    parser.add_argument("--epochs", type=int, default=2, help="local epochs per round")
    parser.add_argument("--lr", type=float, default=1.0, help="local (DP-)SGD learning rate")
    parser.add_argument("--batch", type=int, default=64, help="(expected) local batch size")
    parser.add_argument(
        "--dp-sgd-noise",
        type=float,
        default=1.0,
        help="DP-SGD noise multiplier for sample-level privacy; 0 trains with plain SGD",
    )
    parser.add_argument("--dp-sgd-clip", type=float, default=1.0, help="DP-SGD per-example clip")
