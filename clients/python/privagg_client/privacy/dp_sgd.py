"""Sample-level DP-SGD for a PyTorch model, in plain PyTorch (no Opacus).

Each step samples the client's examples by Poisson sampling at rate q, computes every sampled
example's gradient (``torch.func``: ``vmap`` over ``grad``; ``functorch`` on torch 1.13), clips
each to L2 norm C, sums them, adds N(0, (z C)^2) per coordinate from the operating system's
secure generator, divides by the expected batch q n and takes an SGD step (Abadi et al. 2016,
Algorithm 1). A step with no example sampled still adds the noise and steps: whether an example
was sampled must not show.

Each step is one sampled Gaussian (q, z) on the client's examples, composed over every step of
every round in an RDP ledger (:mod:`.accounting`, the job's Java accountant's orders and
conversion). This guarantee is about one *example* of this client's data. It composes with, and
does not replace, the job's client-level guarantee, which covers everything the client sends.
"""

from __future__ import annotations

import importlib
import math
import numbers
import operator
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Callable

from ..errors import PrivacyParameterError, PrivaggError
from . import randomness
from .accounting import EpsilonSpent, RdpLedger
from .checks import real as _real
from .checks import require as _require

LossFn = Callable[[Any, Any], Any]
"""``loss(outputs, labels)`` with mean reduction, e.g. ``torch.nn.functional.cross_entropy``."""


@dataclass(frozen=True)
class DpSgdConfig:
    """DP-SGD's parameters: validated here, before any training."""

    noise_multiplier: float
    """z: the noise std over the clip norm."""
    max_grad_norm: float
    """C: each example's gradient is clipped to this L2 norm."""
    sampling_rate: float
    """q: each example joins a step's batch with this probability."""
    learning_rate: float
    steps_per_round: int
    """DP-SGD steps in one call of :meth:`DpSgd.train` (one federated round)."""
    delta: float = 1e-5
    """The delta at which epsilon is reported."""

    def __post_init__(self) -> None:
        for name in ("noise_multiplier", "max_grad_norm", "learning_rate"):
            _require(name, _real(getattr(self, name)) > 0, "finite and > 0", getattr(self, name))
        q = self.sampling_rate
        _require("sampling_rate", 0 < _real(q) <= 1, "in (0, 1]", q)
        _require("delta", 0 < _real(self.delta) < 1, "in (0, 1)", self.delta)
        steps: object = self.steps_per_round
        ok = (
            not isinstance(steps, bool)
            and isinstance(steps, numbers.Integral)
            and operator.index(steps) >= 1
        )
        _require("steps_per_round", ok, "an integer >= 1", steps)

    @staticmethod
    def for_batch_size(
        examples: int,
        batch_size: float,
        *,
        noise_multiplier: float,
        max_grad_norm: float,
        learning_rate: float,
        epochs_per_round: float = 1.0,
        delta: float = 1e-5,
    ) -> DpSgdConfig:
        """A config whose expected batch is ``batch_size`` of ``examples``, with as many steps
        per round as ``epochs_per_round`` passes over the data take: ceil(epochs n / b)."""
        count: object = examples
        ok = not isinstance(count, bool) and isinstance(count, numbers.Integral)
        _require("examples", ok and operator.index(examples) >= 1, "an integer >= 1", examples)
        b, epochs = _real(batch_size), _real(epochs_per_round)
        _require("batch_size", 0 < b <= examples, f"in (0, examples = {examples}]", batch_size)
        _require("epochs_per_round", epochs > 0, "finite and > 0", epochs_per_round)
        steps = math.ceil(epochs * examples / b)
        _require("the steps per round", steps <= 10**8, "at most 10^8", steps)
        return DpSgdConfig(
            noise_multiplier=noise_multiplier,
            max_grad_norm=max_grad_norm,
            sampling_rate=batch_size / examples,
            learning_rate=learning_rate,
            steps_per_round=steps,
            delta=delta,
        )


@dataclass(frozen=True)
class DpSgdReport:
    """What one round of DP-SGD spent: this round's epsilon alone and the run's so far."""

    steps: int
    """Steps this round."""
    mean_batch: float
    """Examples per step this round, on average (q n expected)."""
    round_epsilon: EpsilonSpent
    run_epsilon: EpsilonSpent
    """Every step of every round so far, composed."""
    ledger: RdpLedger = field(repr=False)


def _torch() -> Any:
    try:
        import torch
    except ImportError as e:
        raise PrivaggError("DP-SGD needs PyTorch (Debian: python3-torch)") from e
    return torch


def _func_api() -> tuple[Any, Any, Any]:
    """(functional_call, grad, vmap): torch.func on torch 2, functorch on torch 1.13."""
    try:
        func = importlib.import_module("torch.func")
        return func.functional_call, func.grad, func.vmap
    except ImportError:
        functorch = importlib.import_module("functorch")
        stateless = importlib.import_module("torch.nn.utils.stateless")
        return stateless.functional_call, functorch.grad, functorch.vmap


class DpSgd:
    """One client's DP-SGD: trains the model it is given in place, one federated round per
    :meth:`train` call (typically on that round's base model), and keeps the client's
    sample-level ledger across the rounds."""

    def __init__(
        self,
        loss: LossFn,
        config: DpSgdConfig,
        random_bytes: randomness.RandomBytes = randomness.SYSTEM,
    ) -> None:
        self.loss = loss
        self.config = config
        self.random_bytes = random_bytes
        self._ledger = RdpLedger()

    @property
    def ledger(self) -> RdpLedger:
        """Every step so far, as sampled Gaussians on this client's examples."""
        return self._ledger

    def train(self, model: Any, features: Any, labels: Any) -> DpSgdReport:
        """``config.steps_per_round`` DP-SGD steps of ``model`` (a ``torch.nn.Module``, changed
        in place) on this client's examples (``features`` and ``labels``, first dimension n, the
        same examples every round), then the report."""
        torch = _torch()
        for name, module in model.named_modules():
            # Batch statistics mix examples: a per-example gradient would not be one example's.
            if isinstance(module, torch.nn.modules.batchnorm._BatchNorm):
                raise PrivacyParameterError(
                    f"model: module {name or type(module).__name__} is a batch norm, which mixes"
                    " the examples of a batch, so no gradient is one example's; use GroupNorm or"
                    " LayerNorm"
                )
        entries = sum(
            1 for m in model.modules() for p in m._parameters.values() if p is not None
        )
        if entries != len(list(model.parameters())):
            # torch 1.13's functional_call replaces one alias of a tied weight only.
            raise PrivacyParameterError(
                "model: it ties parameters (one tensor under two names), whose per-example"
                " gradients functional_call cannot compute; untie them"
            )
        for name, value in (("features", features), ("labels", labels)):
            if not isinstance(value, torch.Tensor) or value.dim() == 0:
                raise PrivacyParameterError(
                    f"{name} must be a torch.Tensor with the examples along dimension 0,"
                    f" was {type(value).__name__}"
                    + (" of 0 dimensions" if isinstance(value, torch.Tensor) else "")
                )
        n = int(features.shape[0])
        if n == 0 or int(labels.shape[0]) != n:
            raise PrivacyParameterError(
                f"features and labels must hold the same n >= 1 examples, had {n} and"
                f" {int(labels.shape[0])}"
            )
        if features.is_floating_point() and not bool(torch.isfinite(features).all()):
            raise PrivacyParameterError("features must be finite: they hold NaN or infinity")
        functional_call, grad, vmap = _func_api()
        c = self.config
        names = [name for name, p in model.named_parameters() if p.requires_grad]
        if not names:
            raise PrivacyParameterError("model: it has no parameter that requires a gradient")
        buffers = dict(model.named_buffers())

        def example_loss(params: Mapping[str, Any], x: Any, y: Any) -> Any:
            out = functional_call(model, {**params, **buffers}, (x.unsqueeze(0),))
            return self.loss(out, y.unsqueeze(0))

        # "same": one dropout mask per step (torch 1.13's vmap cannot draw one per example);
        # dropout's randomness is not the privacy noise.
        per_example = vmap(grad(example_loss), in_dims=(None, 0, 0), randomness="same")
        model.train()
        try:  # one example's gradient, released nowhere: a model or input error shows here
            per_example(
                {name: p.detach() for name, p in model.named_parameters() if name in names},
                features[:1],
                labels[:1],
            )
        except (RuntimeError, ValueError, TypeError, IndexError) as e:
            raise PrivacyParameterError(
                f"features and labels: the model's loss cannot be computed on them: {e}"
            ) from e
        # Charged before any step changes the model: a failure mid-round never leaves a step
        # unaccounted.
        self._ledger = self._ledger.plus(c.noise_multiplier, c.sampling_rate, c.steps_per_round)
        sampled = 0
        for _ in range(c.steps_per_round):
            keep = randomness.uniform(n, self.random_bytes) < c.sampling_rate
            batch = torch.from_numpy(keep.nonzero()[0])
            sampled += int(batch.numel())
            params = {name: p.detach() for name, p in model.named_parameters() if name in names}
            if batch.numel() > 0:
                grads = per_example(params, features[batch], labels[batch])
                # One norm over all of an example's tensors: the clip bounds the whole gradient.
                # In double: a large finite gradient is clipped, not overflowed to infinity.
                norms = torch.sqrt(
                    sum(
                        g.reshape(g.shape[0], -1).double().pow(2).sum(dim=1)
                        for g in grads.values()
                    )
                )
                # A non-finite gradient (a loss that overflowed) counts as zero: a NaN passed
                # on would mark the whole update, and only in the steps that sampled it.
                finite = torch.isfinite(norms)
                factors = torch.where(
                    finite,
                    torch.clamp(c.max_grad_norm / (norms + 1e-12), max=1.0),
                    torch.zeros_like(norms),
                )
                sums = {
                    k: torch.einsum(
                        "b,b...->...",
                        factors.to(g.dtype),
                        torch.where(finite.reshape((-1,) + (1,) * (g.dim() - 1)), g, 0.0),
                    )
                    for k, g in grads.items()
                }
            else:
                sums = {k: torch.zeros_like(p) for k, p in params.items()}
            with torch.no_grad():
                for name, p in model.named_parameters():
                    if name not in sums:
                        continue
                    noise = randomness.normal(
                        p.numel(), c.noise_multiplier * c.max_grad_norm, self.random_bytes
                    )
                    noisy = sums[name] + torch.from_numpy(noise).reshape(p.shape).to(p.dtype)
                    p -= c.learning_rate * noisy / (c.sampling_rate * n)
        this_round = RdpLedger().plus(c.noise_multiplier, c.sampling_rate, c.steps_per_round)
        return DpSgdReport(
            steps=c.steps_per_round,
            mean_batch=sampled / c.steps_per_round,
            round_epsilon=this_round.epsilon(c.delta),
            run_epsilon=self._ledger.epsilon(c.delta),
            ledger=self._ledger,
        )
