"""Adversarial review 5 of the consistency round: differences between the Python client and the
Java client / job that a server (lying or honest) runs into. Each test states what Java does and
fails while the Python client does otherwise."""

from __future__ import annotations

import pytest

from privagg_client import SecureProtocolError
from privagg_client.secure import ClientSession
from privagg_client.secure.primitives import round_context
from privagg_client.secure.thresholds import ThreatModel, check_graph, signature_threshold
from secagg_server import SeededRandomness, make_roster

JOB_ID = "review5-job"
ROUND = 3
SESSION = bytes(range(16, 32))
CONTEXT = round_context(JOB_ID, ROUND, SESSION)

# Java: RoundThresholds.choose at curious-server, adversarialClientRate 0.2, maxDropoutRate 0.5
# (2 * 0.2 + 0.5 = 0.9, the limit the spec allows): 20 clients get the complete graph at t = 5,
# 50 clients k = 47, t = 11; RoundThresholds.signatureThreshold is 1 for every n (the docs: "Against
# adversary: curious-server ... T = 1").
CURIOUS = ThreatModel(0.2, 0.5, "curious-server")


def test_the_signature_threshold_against_a_curious_server_is_one_as_in_java() -> None:
    # Python returns (n + A) // 2 + 1 = 31 whatever the adversary: a Python client against a
    # curious-server job waits for a majority of signatures the job (T = 1) never asks for.
    assert signature_threshold(50, CURIOUS) == 1
    assert signature_threshold(1000, ThreatModel(0.1, 0.3, "curious-server")) == 1


@pytest.mark.parametrize("n, k, t", [(20, 20, 5), (50, 47, 11)])
def test_a_python_client_takes_the_roster_the_java_job_chooses_against_a_curious_server(
    n: int, k: int, t: int
) -> None:
    # The Java job chose (k, t) for n under CURIOUS (RoundThresholds.choose): a Java client takes
    # it. The Python client applies the semi-malicious T <= n - (D + 1) bound with the majority T
    # and refuses: "a roster of 20 gets no graph ... needs 13 signatures ... more than the 9
    # clients left". So no Python client can take part in any such round.
    check_graph(n, k, t, CURIOUS)


def test_a_python_client_in_a_curious_server_round_on_the_complete_graph_shares() -> None:
    n = 20
    sessions = [
        ClientSession(JOB_ID, ROUND, SESSION, SeededRandomness(900 + u), CURIOUS) for u in range(n)
    ]
    roster = make_roster([s.advertise() for s in sessions], n, 5, CONTEXT)
    assert len(sessions[0].on_roster(roster)) == n - 1
