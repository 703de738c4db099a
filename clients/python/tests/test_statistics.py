"""The Python client's statistics encoding: the bounded sums a statistics job releases, checked
against sums computed directly from the rows (an independent computation)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from privagg_client import JobConfig
from privagg_client.errors import JobConfigError, NonFiniteValuesError, TensorShapeError
from privagg_client.statistics import encode_rows

SPEC = {
    "jobId": "stats",
    "statistics": {
        "maxRows": 3,
        "budgetWeights": {"count": 1, "sum": 1, "sumOfSquares": 2, "histogram": 4},
        "features": [
            {"name": "age", "bounds": [20, 80], "statistics": ["mean", "stddev"]},
            {"name": "score", "bounds": [0, 10], "statistics": ["histogram"], "bins": 2},
        ],
    },
    "rounds": {"timeout": "10s", "expectedClients": 5},
}


def job() -> JobConfig:
    return JobConfig.from_spec_dict(SPEC)


def test_spec_givesTheBlocksAsTensors_inTheJobsOrder_withTheirShares() -> None:
    j = job()
    assert j.statistics is not None
    assert [t.name for t in j.tensors] == ["count", "age.sum", "age.sumOfSquares", "score.histogram"]
    assert j.shapes["score.histogram"] == (2,)
    blocks = j.statistics.blocks()
    assert [b.share for b in blocks] == pytest.approx([1 / 8, 1 / 8, 2 / 8, 4 / 8])
    # R = 3, age h = 30: sensitivities R, R h, R h^2 / 2, R
    assert [b.sensitivity for b in blocks] == [3.0, 90.0, 1350.0, 3.0]


def test_encode_keepsTheFirstRows_clipsValues_andScalesEachBlockIntoItsShare() -> None:
    j = job()
    assert j.statistics is not None
    rows = np.array([[10.0, 3.0], [50.0, 11.0], [80.0, 5.0], [60.0, 1.0]])  # 4th row left out
    update = encode_rows(j.statistics, rows)
    scales = {b.name: (1 - 2.0**-19) * math.sqrt(b.share) / b.sensitivity for b in j.statistics.blocks()}
    # kept ages clipped: 20, 50, 80 -> centred on 50: -30, 0, 30
    assert update["count"][0] == pytest.approx(3 * scales["count"], rel=1e-6)
    assert update["age.sum"][0] == pytest.approx(0.0, abs=1e-9)
    squares = (900 - 450) + (0 - 450) + (900 - 450)
    assert update["age.sumOfSquares"][0] == pytest.approx(squares * scales["age.sumOfSquares"], rel=1e-6)
    # scores 3, 10 (clipped from 11), 5: bins [0, 5) and [5, 10] -> 1, 2
    assert update["score.histogram"] == pytest.approx(
        np.array([1, 2]) * scales["score.histogram"], rel=1e-6
    )
    norm = math.sqrt(sum(float((v.astype(np.float64) ** 2).sum()) for v in update.values()))
    assert norm < 1


def test_encode_takesColumnsByName_andRefusesWrongFeaturesAndNaN() -> None:
    j = job()
    assert j.statistics is not None
    by_rows = encode_rows(j.statistics, [[30.0, 2.0], [40.0, 7.0]])
    by_columns = encode_rows(j.statistics, {"score": [2.0, 7.0], "age": [30.0, 40.0]})
    for name in by_rows:
        assert np.array_equal(by_rows[name], by_columns[name])
    with pytest.raises(TensorShapeError, match=r"missing \['score'\], unknown \['height'\]"):
        encode_rows(j.statistics, {"age": [1.0], "height": [2.0]})
    with pytest.raises(TensorShapeError, match=r"\(rows, 2\) array"):
        encode_rows(j.statistics, [[1.0, 2.0, 3.0]])
    with pytest.raises(NonFiniteValuesError, match="row 1, feature age: value is NaN"):
        encode_rows(j.statistics, [[30.0, 1.0], [math.nan, 1.0]])


class _Column:
    def __init__(self, values: list[float]) -> None:
        self.values = values

    def to_numpy(self) -> np.ndarray:  # type: ignore[type-arg]
        return np.asarray(self.values)


class _Frame:
    """What encode_rows reads of a pandas DataFrame: ``columns``, ``frame[name].to_numpy()``."""

    def __init__(self, columns: dict[str, list[float]]) -> None:
        self._columns = columns
        self.columns = list(columns)

    def __getitem__(self, name: str) -> _Column:
        return _Column(self._columns[name])

    def to_numpy(self) -> np.ndarray:  # type: ignore[type-arg]
        return np.stack([np.asarray(v) for v in self._columns.values()], axis=1)


def test_encode_ofADataFrame_takesItsColumnsByName() -> None:
    j = job()
    assert j.statistics is not None
    frame = _Frame({"score": [2.0, 7.0], "age": [30.0, 40.0]})
    assert np.array_equal(
        encode_rows(j.statistics, frame)["score.histogram"],
        encode_rows(j.statistics, [[30.0, 2.0], [40.0, 7.0]])["score.histogram"],
    )


def test_spec_refusesAModelAndStatisticsTogether_andBadBounds() -> None:
    both = dict(SPEC, model={"tensors": [{"name": "w", "shape": [1]}]})
    with pytest.raises(JobConfigError, match="statistics and model are both set"):
        JobConfig.from_spec_dict(both)
    bad = {"jobId": "x", "statistics": {"features": [{"name": "a", "bounds": [1, 1], "statistics": ["mean"]}]}}
    with pytest.raises(JobConfigError, match="bounds must be finite with lo < hi"):
        JobConfig.from_spec_dict(bad)
    for feature, message in [
        ({"name": "a", "bounds": [0, "x"], "statistics": ["mean"]}, "could not convert"),
        ({"name": "a", "bounds": [0, 1], "statistics": ["mean"], "weight": 0}, "weight must be in"),
        ({"name": "a", "bounds": [0, 1e-101], "statistics": ["mean"]}, "at least 2e-100 apart"),
        ({"name": "a b", "bounds": [0, 1], "statistics": ["mean"]}, "a feature name must be"),
        (
            {"name": "a", "bounds": [0, 1], "statistics": ["quantiles"], "bins": 2, "quantiles": [1.5]},
            "quantile levels must be in",
        ),
        (
            {"name": "a", "bounds": [0, 1], "statistics": ["histogram"], "bins": 2, "binEdges": [0, 1]},
            "bins and binEdges are both set",
        ),
    ]:
        spec = {"jobId": "x", "statistics": {"features": [feature]}}
        with pytest.raises(JobConfigError, match=message):
            JobConfig.from_spec_dict(spec)
    with pytest.raises(JobConfigError, match="budgetWeights.sums is not a known key"):
        JobConfig.from_spec_dict(
            {"jobId": "x", "statistics": {"budgetWeights": {"sums": 1}, "features": [SPEC["statistics"]["features"][0]]}}  # type: ignore[index]
        )


def test_negativeZero_fallsInTheBinThatStartsAtZero_asInTheJavaClient() -> None:
    spec = {
        "jobId": "z",
        "statistics": {"features": [{"name": "y", "bounds": [-1, 1], "statistics": ["histogram"], "binEdges": [-1, 0, 1]}]},
    }
    j = JobConfig.from_spec_dict(spec)
    assert j.statistics is not None
    update = encode_rows(j.statistics, [[-0.0]])
    assert update["y.histogram"][0] == 0 and update["y.histogram"][1] > 0
