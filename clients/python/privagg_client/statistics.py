"""DP federated statistics: what a client sends for a job whose spec has a ``statistics`` section.

The job releases, each round, noisy sums of bounded per-client contributions: the row count and,
per feature, the centred sum, the centred sum of squares and the histogram its statistics need
(the Java ``dev.privagg.statistics`` package holds the same rules). A client keeps at most
``maxRows`` rows (the first ones), clips every value into its feature's public bounds and scales
each sum into its share of the budget, so its whole contribution has L2 norm below 1; the job
clips every block again, so none of this is trusted.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from .errors import JobConfigError, NonFiniteValuesError, TensorShapeError

STATISTICS = ("sum", "mean", "variance", "stddev", "histogram", "quantiles")
"""The statistics a feature may ask for; the row count is always released."""

MAX_ROWS = 1 << 20
MAX_BINS = 1 << 16
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
_HEADROOM = 1.0 - 2.0**-19
"""Keeps an honest block under the job's clip bound after float rounding (as the Java client)."""


@dataclass(frozen=True)
class Feature:
    """One feature: public bounds ``[lo, hi]``, the statistics wanted, histogram ``bin_edges``
    (from lo to hi, increasing) and quantile ``levels``, and its budget ``weight``."""

    name: str
    lo: float
    hi: float
    statistics: frozenset[str]
    bin_edges: tuple[float, ...] = ()
    levels: tuple[float, ...] = ()
    weight: float = 1.0

    def __post_init__(self) -> None:
        if not _NAME.fullmatch(self.name):
            raise JobConfigError(
                "a feature name must be 1-100 letters, digits, '.', '_' or '-', starting with a "
                f"letter or digit, was {self.name!r}"
            )
        if not (math.isfinite(self.lo) and math.isfinite(self.hi) and self.lo < self.hi):
            raise JobConfigError(
                f"feature {self.name}: bounds must be finite with lo < hi, was [{self.lo}, {self.hi}]"
            )
        if not (abs(self.lo) <= 1e100 and abs(self.hi) <= 1e100 and self.hi - self.lo >= 2e-100):
            raise JobConfigError(
                f"feature {self.name}: bounds must lie within +-1e100 and at least 2e-100 apart, "
                f"was [{self.lo}, {self.hi}]"
            )
        if not 0 < self.weight <= 1e6:
            raise JobConfigError(f"feature {self.name}: weight must be in (0, 1e6], was {self.weight}")
        if "quantiles" in self.statistics and (
            not self.levels
            or any(not 0 < q < 1 for q in self.levels)
            or any(b <= a for a, b in zip(self.levels, self.levels[1:]))
        ):
            raise JobConfigError(
                f"feature {self.name}: quantile levels must be in (0, 1) and increase strictly, "
                f"was {list(self.levels)}"
            )
        unknown = sorted(set(self.statistics) - set(STATISTICS))
        if unknown or not self.statistics:
            raise JobConfigError(
                f"feature {self.name}: statistics must name some of {list(STATISTICS)}, "
                f"was {sorted(self.statistics)}"
            )
        if self.histogram:
            edges = self.bin_edges
            if (
                len(edges) < 2
                or edges[0] != self.lo
                or edges[-1] != self.hi
                or any(b <= a for a, b in zip(edges, edges[1:]))
            ):
                raise JobConfigError(
                    f"feature {self.name}: bin edges must increase from {self.lo} to {self.hi}, "
                    f"was {list(edges)}"
                )

    @property
    def half_width(self) -> float:
        return (self.hi - self.lo) / 2

    @property
    def midpoint(self) -> float:
        return self.lo + (self.hi - self.lo) / 2

    @property
    def has_sum(self) -> bool:
        return bool(self.statistics & {"sum", "mean", "variance", "stddev"})

    @property
    def has_sum_of_squares(self) -> bool:
        return bool(self.statistics & {"variance", "stddev"})

    @property
    def histogram(self) -> bool:
        return bool(self.statistics & {"histogram", "quantiles"})


@dataclass(frozen=True)
class Block:
    """One released bounded sum (a tensor of the job's model): its sensitivity in the data's
    units and its share of the squared clip norm."""

    name: str
    kind: str
    feature: int
    size: int
    sensitivity: float
    share: float

    @property
    def scale(self) -> float:
        """What the client multiplies its sums by: (1 - 2^-19) sqrt(share) / sensitivity."""
        return _HEADROOM * math.sqrt(self.share) / self.sensitivity


@dataclass(frozen=True)
class StatisticsQuery:
    """A statistics job's query: at most ``max_rows`` rows per client of ``features``, the
    budget split by ``weights`` (count, sum, sumOfSquares, histogram)."""

    max_rows: int
    features: tuple[Feature, ...]
    weights: Mapping[str, float]

    def blocks(self) -> list[Block]:
        """The released blocks in the job's order: count, then per feature its sum, sum of
        squares and histogram."""
        raw: list[tuple[str, str, int, int, float, float]] = [
            ("count", "count", -1, 1, float(self.max_rows), self.weights["count"])
        ]
        for i, f in enumerate(self.features):
            h = f.half_width
            r = float(self.max_rows)
            if f.has_sum:
                raw.append((f"{f.name}.sum", "sum", i, 1, r * h, self.weights["sum"] * f.weight))
            if f.has_sum_of_squares:
                raw.append(
                    (
                        f"{f.name}.sumOfSquares",
                        "sumOfSquares",
                        i,
                        1,
                        r * h * h / 2,
                        self.weights["sumOfSquares"] * f.weight,
                    )
                )
            if f.histogram:
                raw.append(
                    (
                        f"{f.name}.histogram",
                        "histogram",
                        i,
                        len(f.bin_edges) - 1,
                        r,
                        self.weights["histogram"] * f.weight,
                    )
                )
        total = sum(w for *_, w in raw)
        return [Block(n, k, i, s, d, w / total) for n, k, i, s, d, w in raw]

    @classmethod
    def from_spec_section(cls, section: Any, source: str = "spec") -> StatisticsQuery:
        """The spec's ``statistics`` section, read by the job's rules (the job refuses the same
        mistakes with the same keys named)."""
        if not isinstance(section, Mapping):
            raise JobConfigError(f"{source}: statistics must be a mapping, was {section!r}")
        max_rows = section.get("maxRows", 1)
        if not (isinstance(max_rows, int) and 1 <= max_rows <= MAX_ROWS):
            raise JobConfigError(f"{source}: statistics.maxRows must be in [1, {MAX_ROWS}], was {max_rows!r}")
        budget = section.get("budgetWeights") or {}
        if not isinstance(budget, Mapping):
            raise JobConfigError(f"{source}: statistics.budgetWeights must be a mapping")
        unknown = sorted(set(budget) - {"count", "sum", "sumOfSquares", "histogram"})
        if unknown:
            raise JobConfigError(
                f"{source}: statistics.budgetWeights.{unknown[0]} is not a known key "
                "(count, sum, sumOfSquares, histogram)"
            )
        weights = {k: float(budget.get(k, 1.0)) for k in ("count", "sum", "sumOfSquares", "histogram")}
        for k, w in weights.items():
            if not (0 < w <= 1e6):
                raise JobConfigError(f"{source}: statistics.budgetWeights.{k} must be in (0, 1e6], was {w}")
        listed = section.get("features")
        if not isinstance(listed, list) or not listed:
            raise JobConfigError(f"{source}: statistics.features must be a non-empty list")
        features = []
        for i, f in enumerate(listed):
            key = f"{source}: statistics.features[{i}]"
            if not isinstance(f, Mapping):
                raise JobConfigError(f"{key} must be a mapping, was {f!r}")
            try:
                features.append(_feature(f, key))
            except (TypeError, ValueError) as e:
                raise JobConfigError(f"{key}: {e}") from e
        names = [f.name for f in features]
        if len(set(names)) != len(names):
            raise JobConfigError(f"{source}: statistics.features name a feature twice: {names}")
        return cls(max_rows, tuple(features), weights)


def _feature(f: Mapping[str, Any], key: str) -> Feature:
    """One entry of ``statistics.features``, read by the job's rules."""
    bounds = f.get("bounds")
    if not (isinstance(bounds, list) and len(bounds) == 2):
        raise JobConfigError(f"{key}.bounds must be two numbers [lo, hi], was {bounds!r}")
    lo, hi = float(bounds[0]), float(bounds[1])
    if "binEdges" in f and "bins" in f:
        raise JobConfigError(f"{key}.bins and binEdges are both set: give one of them")
    edges: tuple[float, ...] = ()
    if "binEdges" in f:
        edges = tuple(float(e) for e in f["binEdges"])
    elif "bins" in f:
        bins = int(f["bins"])
        if not 1 <= bins <= MAX_BINS:
            raise JobConfigError(f"{key}.bins must be in [1, {MAX_BINS}], was {bins}")
        edges = tuple(hi if j == bins else lo + (hi - lo) * j / bins for j in range(bins + 1))
    stats = f.get("statistics")
    if not isinstance(stats, list):
        raise JobConfigError(f"{key}.statistics must be a list, e.g. [mean]")
    return Feature(
        str(f.get("name")),
        lo,
        hi,
        frozenset(str(s).lower() for s in stats),
        edges,
        tuple(float(q) for q in f.get("quantiles", [])),
        float(f.get("weight", 1.0)),
    )


def _columns(query: StatisticsQuery, rows: Any) -> npt.NDArray[np.float64]:
    """``rows`` as a (rows, features) float64 array in the query's feature order: a 2-D
    array-like, a mapping of feature names to columns, or a pandas DataFrame (by column name)."""
    names = [f.name for f in query.features]
    if hasattr(rows, "columns") and hasattr(rows, "to_numpy"):  # a DataFrame, without pandas
        rows = {str(c): rows[c].to_numpy() for c in rows.columns}
    if isinstance(rows, Mapping):
        missing = [n for n in names if n not in rows]
        unknown = [str(k) for k in rows if k not in names]
        if missing or unknown:
            raise TensorShapeError(
                f"statistics rows must have exactly the features {names}; "
                f"missing {missing}, unknown {unknown}"
            )
        columns = [np.asarray(rows[n], dtype=np.float64).reshape(-1) for n in names]
        if len({len(c) for c in columns}) > 1:
            raise TensorShapeError(
                f"statistics columns must have one length, had {[len(c) for c in columns]}"
            )
        return np.stack(columns, axis=1) if columns else np.zeros((0, 0))
    array = np.asarray(rows, dtype=np.float64)
    if array.ndim == 1 and array.size == 0:
        array = array.reshape(0, len(names))
    if array.ndim != 2 or array.shape[1] != len(names):
        raise TensorShapeError(
            f"statistics rows must be a (rows, {len(names)}) array of the features {names}, "
            f"had shape {list(array.shape)}"
        )
    return array


def encode_rows(query: StatisticsQuery, rows: Any) -> dict[str, npt.NDArray[np.float32]]:
    """The update a client sends for ``rows``: each block's scaled sums, by tensor name.

    Keeps the first ``max_rows`` rows, clips values into their bounds (infinities too) and
    raises :class:`NonFiniteValuesError` for a NaN, naming its row and feature."""
    data = _columns(query, rows)[: query.max_rows]
    nan = np.argwhere(np.isnan(data))
    if nan.size:
        r, c = (int(x) for x in nan[0])
        raise NonFiniteValuesError(
            f"statistics row {r}, feature {query.features[c].name}: value is NaN"
        )
    out: dict[str, npt.NDArray[np.float32]] = {}
    for block in query.blocks():
        sums: npt.NDArray[np.float64]
        if block.kind == "count":
            sums = np.array([float(len(data))])
        else:
            f = query.features[block.feature]
            x: npt.NDArray[np.float64] = np.clip(data[:, block.feature], f.lo, f.hi)
            h = f.half_width
            centred: npt.NDArray[np.float64] = np.clip(x - f.midpoint, -h, h)
            if block.kind == "sum":
                sums = np.array([centred.sum()])
            elif block.kind == "sumOfSquares":
                sums = np.array([(centred * centred - h * h / 2).sum()])
            else:
                edges = np.asarray(f.bin_edges)
                index = np.clip(np.searchsorted(edges, x, side="right") - 1, 0, len(edges) - 2)
                sums = np.bincount(index, minlength=len(edges) - 1).astype(np.float64)
        out[block.name] = (sums * block.scale).astype(np.float32)
    return out
