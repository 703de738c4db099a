"""Local DP filters, checked against independent computations: the analytic Gaussian's std from
Balle and Wang's delta formula bisected here, the exponential mechanism's peeling probabilities
written out by hand, and the Gaussian composition's closed form.

Statistical tests use fixed seeds and allow 5 standard errors: a correct implementation fails
one such check with probability about 6e-7 (two-sided normal tail at 5 sigma)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from privagg_client.errors import NonFiniteValuesError, PrivacyParameterError, TensorShapeError
from privagg_client.privacy import randomness
from privagg_client.privacy.accounting import gaussian_epsilon
from privagg_client.privacy.local_dp import (
    FlareSvtReplica,
    GaussianLocalDp,
    KeepLargestNoGuarantee,
    LocalDpFilter,
    LocalDpLedger,
    LocalDpStatement,
    PrivateTopK,
)

SIGMAS = 5  # standard errors allowed in statistical checks


def _phi(t: float) -> float:
    return 0.5 * math.erfc(-t / math.sqrt(2))


def _balle_wang_delta(epsilon: float, z: float) -> float:
    """Balle and Wang 2018, Theorem 8, for a Gaussian of std z at sensitivity 1."""
    return _phi(1 / (2 * z) - epsilon * z) - math.exp(epsilon) * _phi(-1 / (2 * z) - epsilon * z)


def _analytic_z(epsilon: float, delta: float) -> float:
    lo, hi = 1e-3, 1e3  # delta falls as z grows
    for _ in range(200):
        mid = (lo + hi) / 2
        if _balle_wang_delta(epsilon, mid) > delta:
            lo = mid
        else:
            hi = mid
    return hi


def _nonzero(update: dict[str, np.ndarray[Any, Any]]) -> int:
    return sum(int(np.count_nonzero(a)) for a in update.values())


# Gaussian


def test_gaussian_noiseStd_isTheAnalyticGaussians_atSensitivityTwiceTheClipNorm() -> None:
    f = GaussianLocalDp(clip_norm=0.5, epsilon=1.0, delta=1e-5)
    sigma = _analytic_z(1.0, 1e-5) * 2 * 0.5
    assert f.sigma == pytest.approx(sigma, rel=1e-9)
    zeros = {"w": np.zeros((400, 500), np.float32), "b": np.zeros(7), "s": np.float32(0)}
    release = f.apply(zeros, randomness.seeded(1))
    # 100,008 coordinates: 50,004 Box-Muller radii, each cutting off at most 2^-118.
    sampler = (1 + math.e) * 50_004 * 2.0**-118
    assert release.statement == LocalDpStatement(
        "gaussian", 1.0, 1e-5, f.sigma, 0.5, "gaussian", release.statement.sampler_delta
    )
    assert release.statement.sampler_delta == pytest.approx(sampler, rel=1e-12)
    noise = np.concatenate([np.ravel(a) for a in release.update.values()]).astype(np.float64)
    n = noise.size
    assert abs(noise.mean()) < SIGMAS * sigma / math.sqrt(n)
    assert abs(noise.std() - sigma) < SIGMAS * sigma / math.sqrt(2 * (n - 1))


def test_gaussian_clipsTheWholeUpdate_scalarsIncluded_toTheClipNorm_andNoisesScalars() -> None:
    f = GaussianLocalDp(clip_norm=1.0, epsilon=10.0, delta=1e-3)
    update = {"w": np.array([3.0, 0.0]), "s": np.float32(4.0)}  # norm 5 -> (0.6, 0), 0.8
    runs = 10_000
    out = np.empty((runs, 3))
    rb = randomness.seeded(2)
    for r in range(runs):
        u = f.apply(update, rb).update
        assert u["w"].shape == (2,) and u["s"].shape == () and u["s"].dtype == np.float32
        out[r] = [u["w"][0], u["w"][1], u["s"]]
    standard_error = f.sigma / math.sqrt(runs)
    assert np.abs(out.mean(axis=0) - [0.6, 0.0, 0.8]).max() < SIGMAS * standard_error
    assert abs(out[:, 2].std() - f.sigma) < SIGMAS * f.sigma / math.sqrt(2 * (runs - 1))


def test_gaussian_refusesBadParameters_namingThem() -> None:
    with pytest.raises(PrivacyParameterError, match=r"^clip_norm must be finite and > 0, was nan"):
        GaussianLocalDp(math.nan, 1.0, 1e-5)
    with pytest.raises(PrivacyParameterError, match=r"^epsilon must be finite and > 0, was 0"):
        GaussianLocalDp(1.0, 0, 1e-5)
    with pytest.raises(PrivacyParameterError, match=r"^delta must be in \(0, 1\), was 1"):
        GaussianLocalDp(1.0, 1.0, 1)


# Keep largest (no guarantee)


def test_keepLargest_keepsExactlyTheTopFraction_scalarsIncluded_andSaysNone() -> None:
    update = {"a": np.array([[1.0, -9.0], [3.0, 0.5]]), "s": -7.0, "b": np.array([2.0, 4.0])}
    release = KeepLargestNoGuarantee(fraction=3 / 7).apply(update)
    assert {k: v.tolist() for k, v in release.update.items()} == {
        "a": [[0.0, -9.0], [0.0, 0.0]],
        "s": -7.0,
        "b": [0.0, 4.0],
    }
    assert all(v.dtype == np.float32 for v in release.update.values())
    assert release.statement.guarantee == "none"
    assert release.statement.epsilon == math.inf


def test_keepLargest_breaksTiesByTheLowerIndex() -> None:
    w = np.tile([1.0, -1.0], 50)  # long enough that an unstable sort would mix the ties
    release = KeepLargestNoGuarantee(fraction=0.5).apply({"w": w})
    assert release.update["w"].tolist() == w[:50].tolist() + [0.0] * 50


# Private top-k


def test_privateTopK_releasesExactlyKNonZeros_withinBound_atTheGivenEpsilon() -> None:
    values = 10 * randomness.normal(999, 1.0, randomness.seeded(3)).reshape(27, 37)
    update = {"w": values, "s": np.float32(50.0)}
    f = PrivateTopK(k=20, bound=0.5, epsilon=3.0)
    release = f.apply(update, randomness.seeded(4))
    assert _nonzero(release.update) == 20
    assert max(float(np.abs(a).max()) for a in release.update.values()) <= 0.5
    laplace_scale = 2 * 0.5 * 20 / 1.5  # 2 bound k / ((1 - selection_share) epsilon)
    statement = release.statement
    assert (statement.mechanism, statement.epsilon, statement.delta) == ("private-top-k", 3.0, 0.0)
    assert (statement.noise_scale, statement.clip_bound) == (pytest.approx(laplace_scale), 0.5)
    assert statement.guarantee == "pure" and 0 < statement.sampler_delta < 1e-25


def test_privateTopK_selectsAsKPeeledExponentialMechanisms() -> None:
    # |x| = 1, 0.5, 0 at bound 1; epsilon 8, half for selecting k = 2: eps_each = 2, so the
    # exponential mechanism's weights exp(eps_each * |x_i| / (2 * bound)) are e^1, e^0.5, e^0.
    w = [math.e, math.exp(0.5), 1.0]
    total = sum(w)
    p_top_two = w[0] / total * w[1] / (total - w[0]) + w[1] / total * w[0] / (total - w[1])
    f = PrivateTopK(k=2, bound=1.0, epsilon=8.0)
    update = {"w": np.array([1.0, -0.5]), "s": np.float32(0.0)}
    rb = randomness.seeded(5)
    runs = 10_000
    hits = 0
    for _ in range(runs):
        u = f.apply(update, rb).update
        hits += int(u["s"] == 0)  # zero noise on a chosen coordinate has probability 0
    standard_error = math.sqrt(p_top_two * (1 - p_top_two) / runs)
    assert abs(hits / runs - p_top_two) < SIGMAS * standard_error


def test_privateTopK_valueNoise_isLaplaceOfScale2BoundKOverTheValuesEpsilon() -> None:
    d = 100_000
    # scale 2 * 1 * 1e5 / 2e6 = 0.1: each value at epsilon 20, within the sampler's reach.
    f = PrivateTopK(k=d, bound=1.0, epsilon=4e6)
    assert f.value_noise_scale == pytest.approx(0.1, rel=1e-12)
    release = f.apply({"w": np.zeros(d)}, randomness.seeded(6))
    noise = release.update["w"].astype(np.float64)
    # |Laplace(s)| is exponential: mean s, std s (clipping at 10 s moves the mean by 5e-6 s).
    assert abs(np.abs(noise).mean() - 0.1) < SIGMAS * 0.1 / math.sqrt(d)
    assert abs(noise.mean()) < SIGMAS * math.sqrt(2) * 0.1 / math.sqrt(d)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"k": 0}, r"^k must be an integer >= 1, was 0"),
        ({"k": 2.0}, r"^k must be an integer >= 1, was 2.0"),
        ({"bound": -1.0}, r"^bound must be finite and > 0, was -1.0"),
        ({"bound": math.inf}, r"^bound must be finite and > 0, was inf"),
        ({"epsilon": math.nan}, r"^epsilon must be finite and > 0, was nan"),
        ({"selection_share": 1.0}, r"^selection_share must be in \(0, 1\), was 1.0"),
        ({"selection_share": 0.0}, r"^selection_share must be in \(0, 1\), was 0.0"),
    ],
)
def test_privateTopK_refusesBadParameters_namingThem(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(PrivacyParameterError, match=message):
        valid: dict[str, Any] = {"k": 1, "bound": 1.0, "epsilon": 1.0}
        PrivateTopK(**{**valid, **kwargs})


def test_privateTopK_refusesKAboveTheUpdatesDimension() -> None:
    message = r"^k must be in \[1, 3\] \(the update's dimension\), was 4"
    with pytest.raises(PrivacyParameterError, match=message):
        PrivateTopK(k=4, bound=1.0, epsilon=1.0).apply({"w": np.zeros(2), "s": 0.0})


@pytest.mark.parametrize(
    "f",
    [
        GaussianLocalDp(1.0, 1.0, 1e-5),
        KeepLargestNoGuarantee(0.5),
        PrivateTopK(1, 1.0, 1.0),
        FlareSvtReplica(),
    ],
    ids=lambda f: type(f).__name__,
)
@pytest.mark.parametrize("bad", [math.nan, math.inf, 1e39])  # 1e39 is infinite as float32
def test_everyFilter_refusesNonFiniteValues_namingTheTensor(f: LocalDpFilter, bad: float) -> None:
    message = r"^tensor 'layer\.bias' holds 1 NaN or infinite"
    with pytest.raises(NonFiniteValuesError, match=message):
        f.apply({"layer.weight": np.ones(3), "layer.bias": np.array([0.0, bad])})


# FLARE SVT replica


def test_flareSvtReplica_uploadsNUploadCoordinates_withinGamma_andPassesScalarsUnnoised() -> None:
    values = 1e-5 * randomness.normal(1000, 1.0, randomness.seeded(7))
    update = {"w": values[:600].reshape(20, 30), "b": values[600:], "step": np.float32(0.123)}
    release = FlareSvtReplica().apply(update, randomness.seeded(8))
    assert release.update["step"].shape == () and release.update["step"] == np.float32(0.123)
    # d = 1001 with the scalar: 101 draws with replacement from about 1000 passing, about 96
    # distinct (std about 2; 85 is over 5 std away).
    assert 85 <= _nonzero({k: v for k, v in release.update.items() if k != "step"}) <= 101
    assert max(float(np.abs(release.update[k]).max()) for k in ("w", "b")) <= np.float32(1e-5)
    assert release.statement.guarantee == "none" and release.statement.epsilon == math.inf


def test_flareSvtReplica_withoutScalars_saysNone_andClaimsItsOwnReading() -> None:
    f = FlareSvtReplica()
    release = f.apply({"w": np.full(1000, 1e-5)}, randomness.seeded(9))
    assert 85 <= _nonzero(release.update) <= 100  # 100 draws with replacement
    # Noise on unclipped values: no guarantee, even without a scalar.
    assert release.statement.guarantee == "none" and release.statement.epsilon == math.inf
    # 100 values at noise_var 0.1, the threshold's 0.1, the queries' 0.1 * 200^(2/3)
    assert f.claimed_epsilon(1000) == pytest.approx(100 * 0.1 + 0.1 + 0.1 * 200 ** (2 / 3))


def test_flareSvtReplica_onASevenMillionParameterModel_claimsAtLeast70000Epsilon() -> None:
    assert FlareSvtReplica().claimed_epsilon(7_000_000) >= 70_000


# Ledger


def _gaussian(z: float, clip: float = 2.0) -> LocalDpStatement:
    return LocalDpStatement("gaussian", 1.0, 1e-5, z * 2 * clip, clip, "gaussian")


def test_ledger_composesGaussiansExactly_andAddsPureEpsilons() -> None:
    # z = 3 and z = 4 compose as one Gaussian of z = (1/9 + 1/16)^(-1/2) = 12/5.
    pure = LocalDpStatement("private-top-k", 0.7, 0.0, 1.0, 1.0, "pure")
    ledger = LocalDpLedger().plus(_gaussian(3.0)).plus(pure).plus(_gaussian(4.0, clip=0.1))
    assert ledger.rounds == 3
    epsilon = ledger.epsilon(1e-6)
    assert epsilon == pytest.approx(gaussian_epsilon(2.4, 1e-6) + 0.7, rel=1e-12)
    assert _balle_wang_delta(epsilon - 0.7, 2.4) == pytest.approx(1e-6, rel=1e-6)
    assert LocalDpLedger().plus(pure).plus(pure).epsilon(0.0) == pytest.approx(1.4)


def test_ledger_withARealGaussianFilter_matchesOneGaussianOfZOverSqrtRounds() -> None:
    f = GaussianLocalDp(clip_norm=1.0, epsilon=2.0, delta=1e-5)
    statement = f.apply({"w": np.ones(3)}, randomness.seeded(10)).statement
    ledger = LocalDpLedger()
    for _ in range(4):
        ledger = ledger.plus(statement)
    z = _analytic_z(2.0, 1e-5) / 2
    assert _balle_wang_delta(ledger.epsilon(1e-5), z) == pytest.approx(1e-5, rel=1e-6)


def test_ledger_isInfinite_afterAnyReleaseWithoutGuarantee() -> None:
    none = KeepLargestNoGuarantee(0.5).apply({"w": np.ones(2)}).statement
    ledger = LocalDpLedger().plus(_gaussian(3.0))
    assert math.isfinite(ledger.epsilon(1e-5))
    assert ledger.plus(none).epsilon(1e-5) == math.inf
    assert ledger.rounds == 1  # plus returned a new ledger
    assert ledger.epsilon(0.0) == math.inf  # a Gaussian gives no pure DP


def test_ledger_metadata_states_the_composed_epsilon_for_send_update() -> None:
    f = GaussianLocalDp(clip_norm=1.0, epsilon=2.0, delta=1e-5)
    ledger = LocalDpLedger()
    for _ in range(3):
        ledger = ledger.plus(f.apply({"w": np.ones(4)}, randomness.seeded(1)).statement)
    meta = ledger.metadata(1e-5)
    assert meta["localDp.mechanism"] == "gaussian" and meta["localDp.rounds"] == "3"
    assert float(meta["localDp.roundEpsilon"]) == 2.0
    assert float(meta["localDp.epsilon"]) == pytest.approx(ledger.epsilon(1e-5))
    assert float(meta["localDp.epsilon"]) < 3 * 2.0  # tighter than adding the rounds up
    assert all(isinstance(v, str) for v in meta.values())


def test_flareSvtReplica_refusesATauNothingPasses() -> None:
    with pytest.raises(PrivacyParameterError, match="tau must let coordinates pass"):
        FlareSvtReplica(tau=1.0).apply({"w": np.full(10, 1e-5)}, randomness.seeded(3))


def test_statements_refuse_a_pure_epsilon_that_is_negative_or_has_a_delta() -> None:
    with pytest.raises(PrivacyParameterError, match="epsilon must be finite and >= 0"):
        LocalDpStatement("x", -5.0, 0.0, 0.0, 1.0, "pure")
    with pytest.raises(PrivacyParameterError, match="delta must be 0 for a pure release"):
        LocalDpStatement("x", 1.0, 0.5, 0.0, 1.0, "pure")


def test_two_tensors_named_alike_as_text_are_refused() -> None:
    with pytest.raises(TensorShapeError, match="two tensors are named '1'"):
        GaussianLocalDp(1.0, 1.0, 1e-5).apply({1: np.ones(2), "1": np.ones(2)})


def test_privateTopK_selects_on_the_clipped_values() -> None:
    # Without the clip, 1000 would be chosen every time; clipped to the bound, both coordinates
    # have utility 1 and each is chosen half the time. 4000 draws: std 0.0079, 5 of them 0.04.
    f = PrivateTopK(k=1, bound=1.0, epsilon=2.0)
    random_bytes = randomness.seeded(12)
    first = sum(
        f.apply({"x": np.array([1000.0, 1.0])}, random_bytes).update["x"][0] != 0
        for _ in range(4000)
    )
    assert abs(first / 4000 - 0.5) < 0.04


def test_epsilons_the_noise_sampler_cannot_carry_are_refused() -> None:
    # At epsilon 100 a round the Gaussian would have to reach past 10 std to hide a neighbour.
    with pytest.raises(PrivacyParameterError, match="epsilon must be smaller for the noise"):
        GaussianLocalDp(1.0, 100.0, 1e-5).apply({"w": np.ones(10)})
    with pytest.raises(PrivacyParameterError, match="epsilon must be smaller for the noise"):
        PrivateTopK(k=1, bound=1.0, epsilon=200.0).apply({"w": np.ones(10)})
    release = GaussianLocalDp(1.0, 10.0, 1e-5).apply({"w": np.ones(10)}, randomness.seeded(1))
    assert 0 < release.statement.sampler_delta < 1e-20


def test_the_ledger_takes_the_samplers_delta_first() -> None:
    g = LocalDpStatement("gaussian", 1.0, 1e-5, 3.0 * 2, 1.0, "gaussian", sampler_delta=4e-6)
    ledger = LocalDpLedger().plus(g)
    assert ledger.epsilon(1e-5) == pytest.approx(gaussian_epsilon(3.0, 6e-6))
    assert ledger.epsilon(3e-6) == math.inf


def test_flareSvtReplica_gives_up_after_100_passes_that_accept_nothing() -> None:
    with pytest.raises(PrivacyParameterError, match="let none pass in 100 passes in a row"):
        FlareSvtReplica(tau=1.0).apply({"w": np.full(20_000, 1e-5)}, randomness.seeded(4))
