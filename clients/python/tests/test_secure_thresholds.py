"""A client holds the roster's (k, t) to the job's rates (privagg_client.secure.thresholds)."""

from __future__ import annotations

import pytest

from privagg_client import SecureProtocolError
from privagg_client.secure.thresholds import ThreatModel, check_graph

DEFAULT = ThreatModel(0.1, 0.1, "semi-malicious-server")

# What the job's RoundThresholds chooses (Java, RoundThresholdsTest prints them): n, k, t.
JOBS_CHOICES = [
    (DEFAULT, 3, 3, 2),
    (DEFAULT, 10, 7, 5),
    (DEFAULT, 30, 13, 9),
    (DEFAULT, 100, 33, 22),
    (DEFAULT, 1000, 127, 85),
    (DEFAULT, 1_000_000, 193, 129),
    (ThreatModel(0.1, 0.3, "semi-malicious-server"), 10, 10, 6),
    (ThreatModel(0.1, 0.3, "semi-malicious-server"), 100, 73, 42),
    (ThreatModel(0.1, 0.1, "curious-server"), 1000, 57, 29),
]


@pytest.mark.parametrize("threat, n, k, t", JOBS_CHOICES)
def test_the_graphs_the_job_chooses_pass(threat: ThreatModel, n: int, k: int, t: int) -> None:
    check_graph(n, k, t, threat)


@pytest.mark.parametrize(
    "n, k, t, why",
    [
        (50, 1, 1, "below 2"),  # t = 1: every honest answer would hand over a seed
        (100, 33, 17, "colluders"),  # two lists: 2t - k = 1 colluder suffices
        (100, 3, 3, "falls apart"),  # a ring of degree 2 splits when colluders leave
        (20, 20, 2, "complete graph"),  # 2 colluders, 2t - n < 0: any one reaches
    ],
)
def test_a_graph_the_server_picked_below_the_rates_is_refused(
    n: int, k: int, t: int, why: str
) -> None:
    with pytest.raises(SecureProtocolError, match=why):
        check_graph(n, k, t, DEFAULT)


def test_an_unknown_adversary_is_refused_by_name() -> None:
    with pytest.raises(SecureProtocolError, match="adversary must be one of"):
        ThreatModel(0.1, 0.1, "malicious")
