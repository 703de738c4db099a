"""Sample-level DP-SGD (privagg_client.privacy.dp_sgd) and its accountant."""

from __future__ import annotations

import json
import math
import os

import numpy as np
import pytest

from privagg_client.errors import PrivacyParameterError
from privagg_client.privacy import randomness
from privagg_client.privacy.accounting import (
    RdpLedger,
    composed_gaussian_epsilon,
    gaussian_noise_multiplier,
)
from privagg_client.privacy.dp_sgd import DpSgd, DpSgdConfig

torch = pytest.importorskip("torch")
nn = torch.nn


def test_accountant_reproduces_the_mnist_dp_sgd_example() -> None:
    # Abadi et al. 2016's MNIST setting as TF Privacy's compute_dp_sgd_privacy states it: 60,000
    # examples, batch 256, z 1.1, 60 epochs: ceil(60 * 60000 / 256) = 14063 steps, eps 2.59665553.
    config = DpSgdConfig.for_batch_size(
        60000, 256, noise_multiplier=1.1, max_grad_norm=1.0, learning_rate=0.1, epochs_per_round=60
    )
    assert config.steps_per_round == 14063
    spent = RdpLedger().plus(1.1, config.sampling_rate, 14063).epsilon(1e-5)
    assert spent.epsilon == pytest.approx(2.59665553, abs=5e-9)


def test_accountant_reproduces_opacus_own_test_value() -> None:
    # Opacus tests/accountants_test.py: z 1.5, q 0.04, 2250 steps, delta 1e-5 -> 7.32911117143.
    spent = RdpLedger().plus(1.5, 0.04, 2250).epsilon(1e-5)
    assert spent.epsilon == pytest.approx(7.32911117143, abs=1e-9)


@pytest.mark.skipif(
    "PRIVAGG_JAVA_EPSILONS" not in os.environ,
    reason="PythonClientIT writes the Java accountant's values to PRIVAGG_JAVA_EPSILONS",
)
def test_accountant_and_calibration_agree_with_the_java_privacy_core() -> None:
    with open(os.environ["PRIVAGG_JAVA_EPSILONS"], encoding="utf-8") as f:
        java = json.load(f)
    assert len(java["rdp"]) >= 10 and len(java["analyticSigma"]) >= 4
    for case in java["rdp"]:
        ours = RdpLedger().plus(case["z"], case["q"], case["steps"]).epsilon(case["delta"])
        assert ours.epsilon == pytest.approx(case["epsilon"], rel=1e-9), case
    for case in java["analyticSigma"]:
        ours = gaussian_noise_multiplier(case["epsilon"], case["delta"])
        assert ours == pytest.approx(case["sigma"], rel=1e-9), case


def test_equal_gaussians_compose_as_one_with_z_over_sqrt_k() -> None:
    z = gaussian_noise_multiplier(1.0, 1e-5)
    assert composed_gaussian_epsilon(z, 1, 1e-5) == pytest.approx(1.0, rel=1e-9)
    assert composed_gaussian_epsilon(z * 2, 4, 1e-5) == pytest.approx(1.0, rel=1e-9)


def _linear(d: int) -> nn.Module:
    model = nn.Linear(d, 1, bias=False)
    with torch.no_grad():
        model.weight.zero_()
    return model


def _sum_loss(outputs: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    # d/dw of w . x is x: each example's gradient is its own features.
    return outputs.sum()


def test_a_step_is_the_jointly_clipped_sum_of_the_sampled_examples_plus_noise_over_q_n() -> None:
    n, d, q, z, c, lr = 40, 6, 0.3, 0.5, 1.0, 0.2
    x = torch.from_numpy(np.random.default_rng(3).normal(0, 1, (n, d)).astype(np.float32))
    x[::2] *= 10  # every other example is clipped
    config = DpSgdConfig(z, c, q, lr, steps_per_round=1)
    model = nn.Linear(d, 1)  # two tensors: an example's gradient is (x, 1), clipped as one
    with torch.no_grad():
        model.weight.zero_()
        model.bias.zero_()
    DpSgd(_sum_loss, config, randomness.seeded(9)).train(model, x, torch.zeros(n))

    # The same draws, in the same order: one uniform per example, then each tensor's noise.
    replay = randomness.seeded(9)
    sampled = randomness.uniform(n, replay) < q
    weight_noise = randomness.normal(d, z * c, replay)
    bias_noise = randomness.normal(1, z * c, replay)
    features = x.numpy().astype(np.float64)
    factors = [min(1.0, c / math.sqrt(row @ row + 1)) for row in features]
    chosen = [i for i in range(n) if sampled[i]]
    weight = -lr * (sum(factors[i] * features[i] for i in chosen) + weight_noise) / (q * n)
    bias = -lr * (sum(factors[i] for i in chosen) + bias_noise) / (q * n)
    assert 0 < len(chosen) < n
    np.testing.assert_allclose(model.weight.detach().numpy()[0], weight, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(model.bias.detach().numpy(), bias, rtol=1e-5, atol=1e-6)


def test_noise_std_is_z_c_and_a_step_without_examples_still_adds_it() -> None:
    # Examples with zero gradient: every step is noise alone, std lr z C / (q n) per coordinate.
    n, d, q, z, c, lr = 10, 20000, 0.5, 1.3, 2.0, 1.0
    model = _linear(d)
    config = DpSgdConfig(z, c, q, lr, steps_per_round=1)
    DpSgd(_sum_loss, config, randomness.seeded(4)).train(model, torch.zeros(n, d), torch.zeros(n))
    w = model.weight.detach().numpy()[0].astype(np.float64)
    expected = lr * z * c / (q * n)
    # The sample std's standard error is expected / sqrt(2 d); 5 of them: false failure ~6e-7.
    assert abs(w.std() - expected) < 5 * expected / math.sqrt(2 * d)
    assert abs(w.mean()) < 5 * expected / math.sqrt(d)

    lonely = _linear(3)
    DpSgd(_sum_loss, DpSgdConfig(1.0, 1.0, 1e-9, 1.0, 1), randomness.seeded(5)).train(
        lonely, torch.ones(1, 3), torch.zeros(1)
    )
    assert np.all(lonely.weight.detach().numpy() != 0), "an empty batch must still be noised"


def test_poisson_batches_average_q_n_and_the_report_composes_rounds() -> None:
    n, q = 400, 0.1
    config = DpSgdConfig(1.0, 1.0, q, 0.01, steps_per_round=50)
    trainer = DpSgd(_sum_loss, config, randomness.seeded(6))
    first = trainer.train(_linear(2), torch.ones(n, 2), torch.zeros(n))
    # Another round's model (as a client trains each round's base model): one ledger.
    second = trainer.train(_linear(2), torch.ones(n, 2), torch.zeros(n))
    # 50 steps of Binomial(400, 0.1): mean 40, std of the mean sqrt(36 / 50) = 0.85; 5 of them.
    assert abs(first.mean_batch - q * n) < 5 * 0.85
    assert first.round_epsilon.epsilon == pytest.approx(second.round_epsilon.epsilon)
    assert second.run_epsilon.epsilon == pytest.approx(
        RdpLedger().plus(1.0, q, 100).epsilon(1e-5).epsilon
    )
    assert first.run_epsilon.epsilon < second.run_epsilon.epsilon < 2 * first.run_epsilon.epsilon


def test_a_small_network_learns_under_dp_sgd() -> None:
    rng = np.random.default_rng(0)
    x = torch.from_numpy(rng.normal(0, 1, (600, 8)).astype(np.float32))
    y = (x[:, 0] + x[:, 1] > 0).long()
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
    config = DpSgdConfig.for_batch_size(
        600, 60, noise_multiplier=1.0, max_grad_norm=1.0, learning_rate=0.5
    )
    trainer = DpSgd(nn.functional.cross_entropy, config, randomness.seeded(8))
    for _ in range(5):
        report = trainer.train(model, x, y)
    accuracy = float((model(x).argmax(1) == y).float().mean())
    assert accuracy > 0.85, accuracy
    assert 0 < report.run_epsilon.epsilon < 10


@pytest.mark.parametrize(
    "field, kwargs",
    [
        ("noise_multiplier", {"noise_multiplier": 0.0}),
        ("max_grad_norm", {"max_grad_norm": -1.0}),
        ("sampling_rate", {"sampling_rate": 1.5}),
        ("learning_rate", {"learning_rate": float("nan")}),
        ("steps_per_round", {"steps_per_round": 0}),
        ("delta", {"delta": 1.0}),
    ],
)
def test_config_errors_name_the_parameter(field: str, kwargs: dict[str, float]) -> None:
    args: dict[str, float] = {
        "noise_multiplier": 1.0,
        "max_grad_norm": 1.0,
        "sampling_rate": 0.1,
        "learning_rate": 0.1,
        "steps_per_round": 1,
    }
    args.update(kwargs)
    with pytest.raises(PrivacyParameterError, match=field):
        DpSgdConfig(**args)  # type: ignore[arg-type]


def test_batch_norm_is_refused_naming_the_module() -> None:
    model = nn.Sequential(nn.Linear(4, 4), nn.BatchNorm1d(4))
    with pytest.raises(PrivacyParameterError, match="module 1 is a batch norm"):
        DpSgd(nn.functional.cross_entropy, DpSgdConfig(1.0, 1.0, 0.1, 0.1, 1)).train(
            model, torch.zeros(2, 4), torch.zeros(2)
        )


class _Overflowing(nn.Module):
    """w . x, but an example whose first feature is 7 gets an infinite loss gradient."""

    def __init__(self) -> None:
        super().__init__()
        self.w = nn.Parameter(torch.zeros(3))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return (x * self.w).sum(dim=1) * torch.where(x[:, 0] == 7, torch.inf, 1.0)


def test_an_example_whose_gradient_is_not_finite_counts_as_zero() -> None:
    # Were a NaN passed on, the update would be NaN exactly in the steps that sampled it.
    x = torch.ones(4, 3)
    x[0, 0] = 7
    model = _Overflowing()
    config = DpSgdConfig(1.0, 1.0, 1.0, 0.1, steps_per_round=3)
    DpSgd(_sum_loss, config, randomness.seeded(2)).train(model, x, torch.zeros(4))
    assert torch.isfinite(model.w).all()


@pytest.mark.parametrize(
    "features, labels, match",
    [
        (np.ones((3, 2), np.float32), torch.zeros(3), "features must be a torch.Tensor"),
        (torch.ones(3, 2), torch.tensor(0.0), "labels must be a torch.Tensor .* of 0 dimensions"),
        (torch.ones(3, 2), torch.zeros(2), "the same n >= 1 examples, had 3 and 2"),
        (torch.tensor([[1.0, float("nan")]] * 3), torch.zeros(3), "features must be finite"),
    ],
)
def test_bad_examples_are_refused_naming_them(features: object, labels: object, match: str) -> None:
    trainer = DpSgd(_sum_loss, DpSgdConfig(1.0, 1.0, 0.5, 0.1, 1))
    with pytest.raises(PrivacyParameterError, match=match):
        trainer.train(_linear(2), features, labels)


def test_numpy_and_non_integer_parameters_are_checked_like_floats() -> None:
    with pytest.raises(PrivacyParameterError, match="noise_multiplier must be finite"):
        DpSgdConfig(np.float32("inf"), 1.0, 0.1, 0.1, 1)  # type: ignore[arg-type]
    with pytest.raises(PrivacyParameterError, match="steps_per_round must be an integer"):
        DpSgdConfig(1.0, 1.0, 0.1, 0.1, 2.5)  # type: ignore[arg-type]
    numpy_config = DpSgdConfig(np.float64(1.0), 1.0, 0.1, 0.1, np.int64(2))  # type: ignore[arg-type]
    assert numpy_config.steps_per_round == 2


def test_tied_weights_are_refused_and_dropout_trains() -> None:
    tied = nn.Sequential(nn.Linear(3, 3), nn.Linear(3, 3))
    tied[1].weight = tied[0].weight
    trainer = DpSgd(_sum_loss, DpSgdConfig(1.0, 1.0, 0.5, 0.1, 1))
    with pytest.raises(PrivacyParameterError, match="ties parameters"):
        trainer.train(tied, torch.ones(4, 3), torch.zeros(4))
    dropout = nn.Sequential(nn.Linear(3, 2), nn.Dropout(0.5))
    trainer.train(dropout, torch.ones(4, 3), torch.zeros(4))
    assert torch.isfinite(dropout[0].weight).all()


def test_dp_sgd_then_a_filter_gives_an_update_the_job_takes() -> None:
    # Composable: DP-SGD trains, a local filter noises the delta, encode_update (the bytes
    # send_update and the secure path start from) takes it, with its local DP as metadata.
    from privagg_client import JobConfig, encode_update, state_dict_delta, wire
    from privagg_client.privacy.local_dp import GaussianLocalDp, LocalDpLedger

    model = nn.Linear(4, 2)
    base = {k: v.detach().clone().numpy() for k, v in model.state_dict().items()}
    trainer = DpSgd(nn.functional.cross_entropy, DpSgdConfig(1.0, 1.0, 0.5, 0.1, 2))
    trainer.train(model, torch.randn(8, 4), torch.zeros(8, dtype=torch.long))
    delta = state_dict_delta(model.state_dict(), base)
    release = GaussianLocalDp(1.0, 4.0, 1e-5).apply(delta, randomness.seeded(1))
    ledger = LocalDpLedger().plus(release.statement)
    job = JobConfig("j", {"weight": [2, 4], "bias": [2]})
    value = encode_update(job, 1, "alice", release.update, ledger.metadata(1e-5))
    record = wire.decode("ClientUpdate", value)
    assert record["metadata"]["localDp.mechanism"] == "gaussian"
    sent = np.frombuffer(record["tensors"][0]["data"], "<f4")
    np.testing.assert_array_equal(sent, release.update["weight"].ravel())


def test_a_huge_finite_gradient_is_clipped_not_dropped() -> None:
    # Its squared norm overflows float32; in double it is clipped to C like any other.
    model = _linear(2)
    config = DpSgdConfig(1e-9, 1.0, 1.0, 1.0, steps_per_round=1)
    DpSgd(_sum_loss, config, randomness.seeded(1)).train(
        model, torch.tensor([[1e20, 0.0]]), torch.zeros(1)
    )
    np.testing.assert_allclose(model.weight.detach().numpy()[0], [-1.0, 0.0], atol=1e-6)


def test_a_model_or_input_that_cannot_train_is_refused_before_anything_is_charged() -> None:
    trainer = DpSgd(_sum_loss, DpSgdConfig(1.0, 1.0, 0.5, 0.1, 1))
    frozen = _linear(2)
    frozen.weight.requires_grad_(False)
    with pytest.raises(PrivacyParameterError, match="no parameter that requires a gradient"):
        trainer.train(frozen, torch.ones(3, 2), torch.zeros(3))
    with pytest.raises(PrivacyParameterError, match="features and labels: the model's loss"):
        trainer.train(_linear(2).double(), torch.ones(3, 2), torch.zeros(3))
    assert trainer.ledger.steps == 0


def test_for_batch_size_checks_its_arguments() -> None:
    make = DpSgdConfig.for_batch_size
    kwargs = {"noise_multiplier": 1.0, "max_grad_norm": 1.0, "learning_rate": 0.1}
    with pytest.raises(PrivacyParameterError, match="examples must be an integer"):
        make(100.5, 10, **kwargs)  # type: ignore[arg-type]
    with pytest.raises(PrivacyParameterError, match="epochs_per_round must be finite"):
        make(100, 10, epochs_per_round=math.inf, **kwargs)
    with pytest.raises(PrivacyParameterError, match="the steps per round must be at most"):
        make(100, 1e-300, **kwargs)
