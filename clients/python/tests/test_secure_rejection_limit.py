"""The rejection limit r a client holds a ``Confirmed`` to (the cuts it accepts without having
rejected the pair): computed exactly here, and equal to what the job's ``RoundThresholds`` (Java,
double-precision hypergeometric quantile) chose for the same rosters (values printed by
``RoundThresholds.choose`` at commit 466223a)."""

from __future__ import annotations

import pytest

from privagg_client.secure.thresholds import ThreatModel, rejection_limit

DEFAULTS = ThreatModel(0.1, 0.1, "semi-malicious-server")
CURIOUS = ThreatModel(0.1, 0.3, "curious-server")


@pytest.mark.parametrize(
    "threat, n, k, r",
    [
        (DEFAULTS, 3, 3, 0),
        (DEFAULTS, 6, 3, 0),
        (DEFAULTS, 12, 9, 1),
        (DEFAULTS, 30, 19, 3),
        (DEFAULTS, 100, 53, 10),
        (DEFAULTS, 257, 129, 25),
        (DEFAULTS, 1000, 377, 75),
        (DEFAULTS, 5000, 637, 127),
        (DEFAULTS, 100000, 811, 162),
        (CURIOUS, 6, 5, 0),
        (CURIOUS, 12, 7, 1),
        (CURIOUS, 30, 17, 3),
        (CURIOUS, 257, 113, 25),
        (CURIOUS, 1000, 247, 60),
        (CURIOUS, 100000, 403, 100),
    ],
)
def test_the_rejection_limit_is_the_jobs(threat: ThreatModel, n: int, k: int, r: int) -> None:
    assert rejection_limit(n, k, threat) == r


def test_the_complete_graph_allows_every_colluder() -> None:
    assert rejection_limit(30, 30, DEFAULTS) == 3
