"""The distributed discrete Gaussian's client side: the exact sampler against the pmf, the
rotation, conditional rounding and the word packing (vectors shared with the Java client)."""

from __future__ import annotations

import json
import math
import random
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from privagg_client.secure import distributed as ddg

VECTORS = json.loads(
    (Path(__file__).parent / "data" / "secagg-vectors-v1.json").read_text(encoding="utf-8")
)["distributedNoise"]

# Chi-square quantiles at 1 - 10^-6 (scipy is not a dependency; these are Apache Commons
# Statistics' ChiSquaredDistribution values): a test fails by chance with probability 10^-6, and with
# fixed seeds in fact never or always.
_CHI2_999999 = {
    1: 23.928, 2: 27.631, 3: 30.665, 4: 33.377, 5: 35.888, 6: 38.258, 7: 40.522, 8: 42.701,
    9: 44.811, 10: 46.863, 12: 50.825, 14: 54.635, 16: 58.324, 18: 61.914, 20: 65.421,
    25: 73.895, 30: 82.044, 40: 97.653, 50: 112.608, 60: 127.096, 80: 155.081, 100: 182.127,
}  # fmt: skip


def _threshold(df: int) -> float:
    """The tabulated quantile at the next larger degree of freedom (conservative); beyond the
    table, Wilson and Hilferty's cube-root approximation, within 0.2% of the exact quantile there
    and above it at 100."""
    for k in sorted(_CHI2_999999):
        if k >= df:
            return _CHI2_999999[k]
    z = 4.753424  # the standard normal's 1 - 10^-6 quantile
    return float(df * (1 - 2 / (9 * df) + z * math.sqrt(2 / (9 * df))) ** 3)


def _chi_square(draws: list[int], variance: float) -> tuple[float, int]:
    reach = int(math.ceil(14 * math.sqrt(variance))) + 5
    weights = {x: math.exp(-x * x / (2 * variance)) for x in range(-reach, reach + 1)}
    total = sum(weights.values())
    counts = Counter(draws)
    n = len(draws)
    statistic, cells, rest_expected, rest_seen = 0.0, 0, 0.0, 0
    for x, w in weights.items():
        expected = n * w / total
        if expected >= 5:
            statistic += (counts.get(x, 0) - expected) ** 2 / expected
            cells += 1
        else:
            rest_expected += expected
            rest_seen += counts.get(x, 0)
    rest_seen += sum(c for x, c in counts.items() if abs(x) > reach)
    if rest_expected > 0:
        statistic += (rest_seen - rest_expected) ** 2 / rest_expected
        cells += 1
    elif rest_seen:
        statistic = math.inf
    return statistic, cells


@pytest.mark.parametrize(
    ("numerator", "denominator", "draws"),
    [(1, 4, 1_000_000), (25, 4, 300_000), (10_000, 1, 300_000)],
)
def test_draws_follow_the_discrete_gaussian_pmf(
    numerator: int, denominator: int, draws: int
) -> None:
    rng = random.Random(numerator * 31 + denominator)
    samples = ddg.DiscreteGaussian(numerator, denominator).samples(draws, rng.randrange)
    statistic, cells = _chi_square(samples, numerator / denominator)
    assert statistic < _threshold(cells - 1), (statistic, cells)


def test_the_same_test_rejects_a_rounded_continuous_gaussian_at_small_sigma() -> None:
    rng = np.random.default_rng(7)
    rounded = [int(x) for x in np.rint(rng.normal(0, 0.5, 300_000))]
    statistic, cells = _chi_square(rounded, 0.25)
    assert statistic > _threshold(cells - 1)


@pytest.mark.parametrize(("n", "d"), [(3, 10), (17, 10), (0, 5), (5, 5)])
def test_bernoulli_exp_minus_has_probability_exp_minus_gamma(n: int, d: int) -> None:
    rng = random.Random(11)
    trials = 200_000
    hits = sum(ddg.bernoulli_exp_minus(n, d, rng.randrange) for _ in range(trials))
    p = math.exp(-n / d)
    assert abs(hits / trials - p) <= 5.3 * math.sqrt(p * (1 - p) / trials) + 1e-12


def test_the_rotation_signs_and_rotation_match_the_java_client() -> None:
    negative = ddg.rotation_signs(VECTORS["jobId"], VECTORS["round"], VECTORS["paddedDimension"])
    assert "".join("1" if s else "0" for s in negative) == VECTORS["negativeSigns"]
    rotated = ddg.rotate(VECTORS["vector"], negative)
    np.testing.assert_allclose(rotated, VECTORS["rotated"], rtol=0, atol=1e-12)
    back = ddg.invert(rotated, negative)
    np.testing.assert_allclose(back[: len(VECTORS["vector"])], VECTORS["vector"], atol=1e-12)


@pytest.mark.parametrize("case", VECTORS["packing"], ids=lambda c: f"{c['bits']} bits")
def test_packing_matches_the_java_client(case: dict[str, object]) -> None:
    words = np.array([int(w) for w in case["words"]], dtype=np.uint64)  # type: ignore[attr-defined]
    bits = int(case["bits"])  # type: ignore[call-overload]
    assert ddg.pack(words, bits).hex() == case["packed"]
    mask = np.uint64((1 << bits) - 1) if bits < 64 else np.uint64(2**64 - 1)
    assert (ddg.unpack(bytes.fromhex(str(case["packed"])), len(words), bits) == words & mask).all()


def test_unpack_refuses_wrong_lengths_and_dirty_padding() -> None:
    packed = bytearray(ddg.pack(np.array([1, 2, 3], dtype=np.uint64), 12))
    with pytest.raises(ValueError, match="expected 6"):
        ddg.unpack(bytes(packed), 4, 12)
    packed[4] |= 0x80
    with pytest.raises(ValueError, match="padding bits must be zero"):
        ddg.unpack(bytes(packed), 3, 12)


def _plan() -> ddg.NoisePlan:
    p = VECTORS["plan"]
    return ddg.NoisePlan(
        bits=p["bits"],
        dimension=p["dimension"],
        padded_dimension=p["paddedDimension"],
        units_per_clip_norm=p["unitsPerClipNorm"],
        max_squared_norm=p["maxSquaredNorm"],
        variance_numerator=p["varianceNumerator"],
        variance_denominator=p["varianceDenominator"],
        noise_shares=p["noiseShares"],
    )


def test_conditional_rounding_keeps_the_squared_norm_bound_exactly() -> None:
    plan = _plan()
    negative = ddg.rotation_signs("ddg-job", 3, plan.padded_dimension)
    rng = np.random.default_rng(3)
    for trial in range(200):
        x = rng.normal(size=plan.dimension) if trial % 3 else np.eye(plan.dimension)[trial % 7]
        units = ddg.round_conditionally(x, 0.5, plan, negative, rng)
        assert int(np.dot(units, units)) <= plan.max_squared_norm


def test_encoded_sums_decode_to_the_sum_plus_noise_without_wrapping() -> None:
    plan = _plan()
    rng = np.random.default_rng(5)
    pyrng = random.Random(5)
    truth = np.zeros(plan.dimension)
    total = np.zeros(plan.padded_dimension, dtype=np.uint64)
    clients = 20
    for _ in range(clients):
        x = np.full(plan.dimension, 1 / math.sqrt(plan.dimension))  # aligned: the worst case
        truth += x
        total += ddg.encode(x, 1.0, plan, "ddg-job", 3, rng, pyrng.randrange)
    decoded = ddg.decode(total, 1.0, plan, "ddg-job", 3)
    std = math.sqrt(clients * plan.variance_numerator / plan.variance_denominator)
    tolerance = (6 * std + clients) / plan.units_per_clip_norm
    assert np.max(np.abs(decoded - truth)) < tolerance


def test_a_plan_promising_less_noise_than_it_holds_is_visible() -> None:
    plan = _plan()
    assert plan.guaranteed_noise_multiplier() >= VECTORS["plan"]["noiseMultiplier"] * (1 - 1e-12)


def test_the_spec_floor_follows_the_gate_and_the_rates() -> None:
    from privagg_client.job import JobConfig

    spec = {
        "jobId": "ddg-job",
        "model": {"tensors": [{"name": "w", "shape": [64, 10]}, {"name": "b", "shape": [10]}]},
        "rounds": {"minimumCohort": {"count": 95, "noiseStd": 10}},
        "privacy": {"mechanism": "distributed-discrete-gaussian", "noiseMultiplier": 1.0},
        "aggregation": {"mode": "secure"},
    }
    floor = JobConfig.from_spec_dict(spec).aggregation.distributed
    # As the Java reader: floor(95 + 1 - 7.0477 * 10) = 25 inputs, less 2 colluders at rate 0.1.
    assert floor is not None and floor.fewest_honest_inputs == 23 and floor.noise_multiplier == 1.0
    spec["privacy"] = {"mechanism": "distributed-discrete-gaussian", "targetEpsilon": 4}
    assert JobConfig.from_spec_dict(spec).aggregation.distributed.noise_multiplier is None  # type: ignore[union-attr]
    given = JobConfig.from_spec_dict(spec, noise_multiplier=2.5).aggregation.distributed
    assert given is not None and given.noise_multiplier == 2.5
    spec["privacy"] = {"noiseMultiplier": 1.0}
    assert JobConfig.from_spec_dict(spec).aggregation.distributed is None


def test_a_lying_job_announcing_less_noise_is_refused() -> None:
    from privagg_client.job import DistributedNoiseFloor

    plan = _plan()
    # The vectors' plan was made for z = 1 with 10 shares.
    floor = DistributedNoiseFloor(plan.noise_shares, 1.0)
    assert ddg.announcement_problem(floor, plan) is None
    weaker = ddg.NoisePlan(**{**plan.__dict__, "variance_numerator": plan.variance_numerator // 2})
    assert "below the spec's" in str(ddg.announcement_problem(floor, weaker))
    fewer = DistributedNoiseFloor(plan.noise_shares // 2, 1.0)
    assert "below the spec's" in str(ddg.announcement_problem(fewer, plan))
    assert "no distributed noise" in str(ddg.announcement_problem(floor, None))
    assert "does not plan" in str(ddg.announcement_problem(None, plan))
    # A spec planned from targetEpsilon has no multiplier to check against: refused, saying how.
    assert "noise_multiplier=Z" in str(
        ddg.announcement_problem(DistributedNoiseFloor(plan.noise_shares, None), plan)
    )


def test_a_sensitivity_too_small_for_rounding_is_refused_and_never_told_by_silence() -> None:
    from privagg_client.job import DistributedNoiseFloor

    plan = _plan()
    floor = DistributedNoiseFloor(plan.noise_shares, 1.0)
    # The vectors' plan holds exactly the bound Java computes: Python's formula agrees.
    assert math.floor(ddg.rounded_squared_bound(plan.units_per_clip_norm, plan.padded_dimension)) == (
        plan.max_squared_norm
    )
    # A quarter of the bound passes the noise check, but rounding would then fail for updates
    # near C only, so sending or not would tell the job which updates are large.
    tight = ddg.NoisePlan(**{**plan.__dict__, "max_squared_norm": plan.max_squared_norm // 4})
    assert "that rounding an update clipped to C" in str(ddg.announcement_problem(floor, tight))
    negative = ddg.rotation_signs("ddg-job", 3, plan.padded_dimension)
    large = np.full(plan.dimension, 1.0)
    units = ddg.round_conditionally(large, 1.0, tight, negative, np.random.default_rng(1))
    assert not units.any()  # zeros, whatever the update, rather than an error
