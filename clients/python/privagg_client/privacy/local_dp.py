"""Local differential privacy: filters a client applies to its own update before sending it.

Local DP's neighbouring relation is "any other update": a release is private if its distribution
changes little whatever the client's update is replaced with, so a sensitivity is the largest
change between any two clipped updates. Each filter is immutable, validated at construction, and
returns a :class:`LocalRelease`: the filtered update as float32 arrays (same names and shapes,
0-d scalars included) and a :class:`LocalDpStatement` of what that one release costs.
:class:`LocalDpLedger` composes a client's releases over the rounds it took part in.

:class:`KeepLargestNoGuarantee` and :class:`FlareSvtReplica` give no usable guarantee and say so;
they are here to compare with what NVIDIA FLARE ships.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

import numpy as np

from ..errors import NonFiniteValuesError, PrivacyParameterError, TensorShapeError
from . import randomness
from .accounting import gaussian_epsilon, gaussian_noise_multiplier
from .checks import positive as _positive
from .checks import require as _require

if TYPE_CHECKING:
    import numpy.typing as npt

Guarantee = Literal["gaussian", "pure", "none"]
_GUARANTEES = ("gaussian", "pure", "none")


@dataclass(frozen=True)
class LocalDpStatement:
    """What one release costs. ``guarantee`` is "gaussian" ((epsilon, delta) of a Gaussian
    mechanism of sensitivity 2 * clip_bound, which the ledger composes exactly), "pure"
    (epsilon-DP, delta 0) or "none" (epsilon inf, delta 1: nothing is promised)."""

    mechanism: str
    epsilon: float
    delta: float
    noise_scale: float
    """The Gaussian's std, or the Laplace scale of the released values; 0 without noise."""
    clip_bound: float
    """The L2 norm ("gaussian") or per-coordinate bound values are clipped to; inf if none."""
    guarantee: Guarantee
    sampler_delta: float = 0.0
    """What the noise sampler's cut-off tails add to delta (:func:`randomness.sampler_delta`)."""

    def __post_init__(self) -> None:
        ok = self.guarantee in _GUARANTEES
        _require("guarantee", ok, f"one of {_GUARANTEES}", self.guarantee)
        ok = math.isfinite(self.sampler_delta) and 0 <= self.sampler_delta < 1
        _require("sampler_delta", ok, "in [0, 1)", self.sampler_delta)
        if self.guarantee == "none":
            ok = self.epsilon == math.inf and self.delta == 1
            _require("epsilon and delta", ok, "inf and 1 without a guarantee", self.epsilon)
        if self.guarantee == "gaussian":
            _positive("noise_scale", self.noise_scale)
            _positive("clip_bound", self.clip_bound)
            _positive("epsilon", self.epsilon)
            _require("delta", 0 < self.delta < 1, "in (0, 1) for a Gaussian release", self.delta)
        if self.guarantee == "pure":
            ok = math.isfinite(self.epsilon) and self.epsilon >= 0
            _require("epsilon", ok, "finite and >= 0 for a pure release", self.epsilon)
            _require("delta", self.delta == 0, "0 for a pure release", self.delta)
            ok = self.noise_scale >= 0 and self.clip_bound > 0
            _require("noise_scale and clip_bound", ok, ">= 0 and > 0", self.noise_scale)


def _no_guarantee(mechanism: str, noise_scale: float, clip_bound: float) -> LocalDpStatement:
    return LocalDpStatement(mechanism, math.inf, 1.0, noise_scale, clip_bound, "none")


@dataclass(frozen=True)
class LocalRelease:
    """A filtered update, ready to send, and what releasing it costs."""

    update: dict[str, npt.NDArray[np.float32]]
    statement: LocalDpStatement


class LocalDpFilter(Protocol):
    def apply(
        self, update: Mapping[str, Any], random_bytes: randomness.RandomBytes = randomness.SYSTEM
    ) -> LocalRelease: ...


def _read(update: Mapping[str, Any]) -> dict[str, npt.NDArray[np.float64]]:
    """The update's tensors in float64, refused (naming the tensor) unless real and finite as
    float32, the type that is sent."""
    if not isinstance(update, Mapping):
        raise TensorShapeError(
            f"an update must map tensor names to arrays, was {type(update).__name__}"
        )
    arrays: dict[str, npt.NDArray[np.float64]] = {}
    for name, value in update.items():
        if hasattr(value, "detach") and hasattr(value, "cpu"):  # torch, as updates.to_numpy
            value = value.detach().cpu().numpy()
        array = np.asarray(value)
        if not np.issubdtype(array.dtype, np.number) or np.iscomplexobj(array):
            raise TensorShapeError(
                f"tensor '{name}' holds {array.dtype} values, not real numbers", tensor=str(name)
            )
        with np.errstate(over="ignore"):  # too large for float32: caught as infinite below
            values = array.astype(np.float32)
        if not np.isfinite(values).all():
            bad = int(values.size - np.count_nonzero(np.isfinite(values)))
            raise NonFiniteValuesError(
                f"tensor '{name}' holds {bad} NaN or infinite values (as float32); "
                "no local DP filter can bound them"
            )
        if str(name) in arrays:
            raise TensorShapeError(
                f"two tensors are named '{name}' (as text): name each tensor once",
                tensor=str(name),
            )
        arrays[str(name)] = values.astype(np.float64)
    return arrays


def _flatten(arrays: Iterable[npt.NDArray[np.float64]]) -> npt.NDArray[np.float64]:
    return np.concatenate([np.ravel(a) for a in arrays] + [np.zeros(0)])


def _unflatten(
    flat: npt.NDArray[np.float64], like: Mapping[str, npt.NDArray[np.float64]]
) -> dict[str, npt.NDArray[np.float32]]:
    out: dict[str, npt.NDArray[np.float32]] = {}
    start = 0
    for name, array in like.items():
        out[name] = flat[start : start + array.size].reshape(array.shape).astype(np.float32)
        start += array.size
    return out


def _within_sampler(extra: float, limit: float, epsilon: float) -> float:
    """``extra``, the sampler's addition to delta, refused above ``limit``: at a large epsilon
    the noise must reach far into its tails to hide a neighbour."""
    if extra > limit:
        raise PrivacyParameterError(
            f"epsilon must be smaller for the noise sampler: at {epsilon!r} its cut-off tails"
            f" (2^-118 per draw) would add {extra:.3g} to delta, above {limit:.3g}"
        )
    return extra


def _share_count(dimension: int, fraction: float) -> int:
    """min(ceil(dimension * fraction), dimension): FLARE's count of coordinates to upload."""
    return min(math.ceil(dimension * fraction), dimension)


@dataclass(frozen=True)
class GaussianLocalDp:
    """(epsilon, delta)-local DP: the whole update (scalars included) as one vector, clipped to
    L2 norm ``clip_norm``, plus N(0, sigma^2) on every coordinate."""

    clip_norm: float
    epsilon: float
    delta: float
    noise_multiplier: float = field(init=False)
    """std / sensitivity, the analytic Gaussian mechanism's (Balle and Wang 2018, Theorem 8)."""

    def __post_init__(self) -> None:
        _positive("clip_norm", self.clip_norm)
        _positive("epsilon", self.epsilon)
        _require("delta", 0 < self.delta < 1, "in (0, 1)", self.delta)
        z = gaussian_noise_multiplier(self.epsilon, self.delta)
        object.__setattr__(self, "noise_multiplier", z)

    @property
    def sigma(self) -> float:
        # Sensitivity 2C: any two updates clipped to norm C are at most 2C apart in L2.
        return self.noise_multiplier * 2 * self.clip_norm

    def apply(
        self, update: Mapping[str, Any], random_bytes: randomness.RandomBytes = randomness.SYSTEM
    ) -> LocalRelease:
        arrays = _read(update)
        flat = _flatten(arrays.values())
        norm = float(np.linalg.norm(flat))
        if norm > self.clip_norm:
            flat = flat * (self.clip_norm / norm)
        noisy = flat + randomness.normal(flat.size, self.sigma, random_bytes)
        radii = (flat.size + 1) // 2
        extra = _within_sampler(
            randomness.sampler_delta(self.epsilon, radii), self.delta / 1000, self.epsilon
        )
        statement = LocalDpStatement(
            "gaussian", self.epsilon, self.delta, self.sigma, self.clip_norm, "gaussian", extra
        )
        return LocalRelease(_unflatten(noisy, arrays), statement)


@dataclass(frozen=True)
class KeepLargestNoGuarantee:
    """Keeps the ``fraction`` of coordinates (scalars included) with the largest absolute values
    and zeros the rest. This gives NO differential privacy: the kept values are exact and which
    ones are kept depends on the data. NVIDIA FLARE's ``PercentilePrivacy`` filter does the like
    (it keeps the largest 100 - percentile percent, clipped to its gamma, and passes scalars):
    a percentile truncation whose parameters suggest privacy but which has none."""

    fraction: float

    def __post_init__(self) -> None:
        _require("fraction", 0 < self.fraction <= 1, "in (0, 1]", self.fraction)

    def apply(
        self, update: Mapping[str, Any], random_bytes: randomness.RandomBytes = randomness.SYSTEM
    ) -> LocalRelease:
        arrays = _read(update)
        flat = _flatten(arrays.values())
        keep = _share_count(flat.size, self.fraction)
        # Stable sort: among equal absolute values the lower flat index is kept.
        kept = np.argsort(-np.abs(flat), kind="stable")[:keep]
        out = np.zeros_like(flat)
        out[kept] = flat[kept]
        return LocalRelease(_unflatten(out, arrays), _no_guarantee("keep-largest", 0.0, math.inf))


@dataclass(frozen=True)
class PrivateTopK:
    """epsilon-local DP (pure) sparsification: k coordinates chosen privately, their values noised.

    Every coordinate (scalars included) is clipped to [-bound, bound]. ``selection_share`` of
    epsilon picks k distinct indices with the exponential mechanism, utility |x_i| (sensitivity
    ``bound`` under the any-other-update relation), peeled k times at selection_share * epsilon
    / k each (basic composition); the rest releases the k chosen values with Laplace noise for
    their L1 sensitivity 2 * bound * k, clipped back into [-bound, bound]. Other coordinates are 0.
    """

    k: int
    bound: float
    epsilon: float
    selection_share: float = 0.5

    def __post_init__(self) -> None:
        k: object = self.k
        integer = not isinstance(k, bool) and isinstance(k, numbers.Integral)
        _require("k", integer and self.k >= 1, "an integer >= 1", self.k)
        _positive("bound", self.bound)
        _positive("epsilon", self.epsilon)
        _require(
            "selection_share", 0 < self.selection_share < 1, "in (0, 1)", self.selection_share
        )

    @property
    def value_noise_scale(self) -> float:
        return 2 * self.bound * self.k / ((1 - self.selection_share) * self.epsilon)

    def apply(
        self, update: Mapping[str, Any], random_bytes: randomness.RandomBytes = randomness.SYSTEM
    ) -> LocalRelease:
        arrays = _read(update)
        x = np.clip(_flatten(arrays.values()), -self.bound, self.bound)
        d = x.size
        _require("k", self.k <= d, f"in [1, {d}] (the update's dimension)", self.k)
        eps_each = self.selection_share * self.epsilon / self.k
        # Gumbel noise of scale 2 * sensitivity / eps_each and the k largest: the same distribution
        # as k peeled exponential mechanisms (Durfee and Rogers 2019, "Practical differentially
        # private top-k selection with pay-what-you-get composition").
        noisy_utility = np.abs(x) + randomness.gumbel(d, 2 * self.bound / eps_each, random_bytes)
        chosen = np.argpartition(noisy_utility, d - self.k)[d - self.k :]
        out = np.zeros_like(x)
        noise = randomness.laplace(self.k, self.value_noise_scale, random_bytes)
        # Clipping the noisy values again is post-processing: it costs nothing.
        out[chosen] = np.clip(x[chosen] + noise, -self.bound, self.bound)
        # Per draw, at that draw's own epsilon: each value is a Laplace release at epsilon_v / k,
        # each peel an exponential mechanism at eps_each over d Gumbel draws (basic composition).
        values_epsilon = (1 - self.selection_share) * self.epsilon / self.k
        extra = self.k * randomness.sampler_delta(values_epsilon, 1)
        extra += self.k * randomness.sampler_delta(eps_each, d)
        extra = _within_sampler(extra, 1e-9, self.epsilon)
        statement = LocalDpStatement(
            "private-top-k", self.epsilon, 0.0, self.value_noise_scale, self.bound, "pure", extra
        )
        return LocalRelease(_unflatten(out, arrays), statement)


@dataclass(frozen=True)
class FlareSvtReplica:
    """What NVIDIA FLARE's ``SVTPrivacy`` filter does with its defaults, as its
    ``svt_privacy.py`` did through release 2.7, re-implemented from that description for
    comparison only. Do not use it for privacy.

    Every tensor is flattened, 0-d scalars too (d counts them); n_upload = min(ceil(d *
    fraction), d) coordinates are chosen by a sparse vector technique on |clip(x_i, -gamma,
    gamma)| against a noisy threshold ``tau`` (repeated over the remaining candidates until
    n_upload pass), n_upload draws are taken from those passing uniformly with replacement
    (FLARE's default), and each drawn one is released as clip(x_i + Laplace(2 gamma / noise_var),
    -gamma, gamma); other coordinates become 0, and 0-d scalars are sent as they were. FLARE draws
    from NumPy's global, predictable generator; this uses the secure one.

    With the defaults each uploaded coordinate costs noise_var = 0.1 epsilon even under FLARE's
    own reading (a Laplace release at sensitivity 2 gamma), so about 70,000 epsilon on a
    7M-parameter model at fraction 0.1, plus the threshold's and the queries'. Through 2.7 the
    noise is added to the raw, unclipped value, whose sensitivity is unbounded, and scalars pass
    unnoised, so no finite epsilon holds: the statement always says "none".
    :meth:`claimed_epsilon` gives what FLARE's own parameters would spend. (FLARE 2.8 clips
    before adding the noise and splits epsilon otherwise between threshold and queries; the
    values' 0.1 per uploaded coordinate is unchanged.)
    """

    fraction: float = 0.1
    epsilon: float = 0.1
    noise_var: float = 0.1
    gamma: float = 1e-5
    tau: float = 1e-6

    MAX_IDLE_PASSES = 100
    """Passes in a row that accept nothing before giving up: a tau far above gamma may never let
    n_upload pass."""

    def __post_init__(self) -> None:
        _require("fraction", 0 < self.fraction <= 1, "in (0, 1]", self.fraction)
        _positive("epsilon", self.epsilon)
        _positive("noise_var", self.noise_var)
        _positive("gamma", self.gamma)
        _require("tau", math.isfinite(self.tau), "finite", self.tau)

    def query_epsilon(self, dimension: int) -> float:
        """eps_2 = epsilon * (2 n_upload)^(2/3), FLARE's budget for the threshold queries."""
        return self.epsilon * math.pow(2 * _share_count(dimension, self.fraction), 2 / 3)

    def claimed_epsilon(self, dimension: int) -> float:
        """n_upload * noise_var (the values) + epsilon (the threshold) + eps_2 (the queries) for
        ``dimension`` coordinates, without allocating them."""
        n_upload = _share_count(dimension, self.fraction)
        return n_upload * self.noise_var + self.epsilon + self.query_epsilon(dimension)

    def apply(
        self, update: Mapping[str, Any], random_bytes: randomness.RandomBytes = randomness.SYSTEM
    ) -> LocalRelease:
        arrays = _read(update)
        x = _flatten(arrays.values())
        d = x.size
        n_upload = _share_count(d, self.fraction)
        out = np.zeros(d)
        if n_upload > 0:
            threshold_noise = randomness.laplace(1, 2 * self.gamma / self.epsilon, random_bytes)
            threshold = self.tau + float(threshold_noise[0])
            query_scale = 4 * self.gamma * n_upload / self.query_epsilon(d)
            utility = np.abs(np.clip(x, -self.gamma, self.gamma))
            candidates = np.arange(d)
            accepted: list[npt.NDArray[np.intp]] = []
            idle = 0
            while sum(a.size for a in accepted) < n_upload:
                noise = randomness.laplace(candidates.size, query_scale, random_bytes)
                above = utility[candidates] + noise >= threshold
                accepted.append(candidates[above])
                candidates = candidates[~above]
                idle = 0 if above.any() else idle + 1
                if idle == self.MAX_IDLE_PASSES:
                    raise PrivacyParameterError(
                        f"tau must let coordinates pass the threshold: {self.tau!r} against"
                        f" gamma {self.gamma!r} let none pass in {idle} passes in a row"
                    )
            passed = np.concatenate(accepted)
            draws = randomness.uniform(n_upload, random_bytes)
            chosen = passed[(draws * passed.size).astype(np.intp)]
            noise = randomness.laplace(n_upload, 2 * self.gamma / self.noise_var, random_bytes)
            out[chosen] = np.clip(x[chosen] + noise, -self.gamma, self.gamma)
        released = _unflatten(out, arrays)
        filtered = {
            name: a.astype(np.float32) if a.ndim == 0 else released[name]
            for name, a in arrays.items()
        }
        value_scale = 2 * self.gamma / self.noise_var
        # Noise on unclipped values, and scalars sent as they are: no finite epsilon holds.
        statement = _no_guarantee("flare-svt-replica", value_scale, self.gamma)
        return LocalRelease(filtered, statement)


@dataclass(frozen=True)
class LocalDpLedger:
    """A client's local releases over the rounds it took part in; immutable: :meth:`plus`
    returns a new ledger, and epsilon is derived from the statements at any delta."""

    releases: tuple[LocalDpStatement, ...] = ()

    def plus(self, statement: LocalDpStatement) -> LocalDpLedger:
        return LocalDpLedger(self.releases + (statement,))

    def metadata(self, delta: float) -> dict[str, str]:
        """This client's local DP so far, for ``send_update(..., metadata=...)``: the last
        release's mechanism and epsilon, and the composed epsilon at ``delta`` over its rounds.
        Sent to the job as it is; the job does not check it."""
        last = self.releases[-1] if self.releases else None
        return {
            "localDp.mechanism": last.mechanism if last else "none",
            "localDp.roundEpsilon": repr(float(last.epsilon)) if last else "0.0",
            "localDp.rounds": str(self.rounds),
            "localDp.epsilon": repr(float(self.epsilon(delta))),
            "localDp.delta": repr(float(delta)),
        }

    @property
    def rounds(self) -> int:
        return len(self.releases)

    def epsilon(self, delta: float) -> float:
        """The Gaussian releases' epsilon at ``delta`` plus the pure releases' epsilons; inf if
        any release has no guarantee (or delta is 0 and there is a Gaussian release)."""
        _require("delta", 0 <= delta < 1, "in [0, 1)", delta)
        if any(s.guarantee == "none" for s in self.releases):
            return math.inf
        # The samplers' cut-off tails take their share of delta first.
        delta -= math.fsum(s.sampler_delta for s in self.releases)
        if delta < 0:
            return math.inf
        pure = math.fsum(s.epsilon for s in self.releases if s.guarantee == "pure")
        # 1 / z^2 per Gaussian release, z = std / sensitivity 2C.
        gaussians = [s for s in self.releases if s.guarantee == "gaussian"]
        inverse_squares = math.fsum((2 * s.clip_bound / s.noise_scale) ** 2 for s in gaussians)
        if inverse_squares == 0:
            return pure
        if delta == 0:
            return math.inf
        # Gaussians compose exactly as one of z = (sum 1/z_i^2)^(-1/2) (Dong, Roth, Su 2019,
        # Corollary 3.3); pure releases add (basic composition).
        return gaussian_epsilon(1 / math.sqrt(inverse_squares), delta) + pure
