"""Adversarial review 5 of the consistency round: differences between the Python client and the
Java client / job that a server (lying or honest) runs into. Each test states what Java does and
fails while the Python client does otherwise."""

from __future__ import annotations

import pytest

from privagg_client import SecureProtocolError
from privagg_client.secure import ClientSession, Roster, RosterEntry
from privagg_client.secure.primitives import round_context, signing_public_key
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


def test_a_python_client_refuses_a_roster_that_lists_its_encryption_key_beside_another_signing_key() -> None:
    # Java's ClientSession.ownIndex refuses a roster entry with the client's encryption key and
    # any other key, the signing key included ("roster entry i has its encryption key but other
    # keys"); the docs: "A client checks its own roster entry, signing key included". Python's
    # _find_self compares only the mask key and the commitment, so a server can list a signing
    # key of its own for a Python client in the roster everyone (that client included) sees, and
    # then sign survivor statements in that client's name: every such client counts as a
    # colluder in T's bound, and the Python client does not notice.
    n = 12
    sessions = [
        ClientSession(JOB_ID, ROUND, SESSION, SeededRandomness(700 + u), ThreatModel(0.1, 0.1))
        for u in range(n)
    ]
    roster = make_roster([s.advertise() for s in sessions], 9, 6, CONTEXT)
    server_key = signing_public_key(bytes([7]) * 32)
    entries = list(roster.entries)
    e = entries[0]
    entries[0] = RosterEntry(
        e.encryption_public_key, e.mask_public_key, e.self_mask_commitment, server_key
    )
    swapped = Roster(tuple(entries), roster.degree, roster.threshold, roster.permutation)
    with pytest.raises(SecureProtocolError):
        sessions[0].on_roster(swapped)


def test_a_session_built_as_the_readme_shows_keeps_its_update_from_a_lying_server() -> None:
    # The README's API for other transports was ClientSession(job_id, round_number, session),
    # whose threat defaulted to None ("for tests of arbitrary graphs only"). Java's public
    # ClientSession.start refuses a null threat model ("it is what a Roster is held to"). Without
    # one the Python session took any (k, t) the server states, skipped the rejection limit on
    # cuts, and counted T without colluders. A lying server then read a client's update with one
    # consistent survivor list: a Roster with t = 1, a Confirmed that cuts every pair of the
    # target (so its masked input carries its self-mask only), and honest Survivors that every
    # client signs; the target's own share of its seed, at t = 1, is the seed.
    #
    # Adapted with the fix: the public constructor requires the threat model (a session without
    # one is ClientSession.unchecked_for_tests, for tests of arbitrary graphs only), and a session
    # built as the README now shows it, with the job spec's threat model, refuses that roster in
    # phase 2: it sends no shares and never masks its update.
    from privagg_client import Aggregation, JobConfig

    with pytest.raises(TypeError):
        ClientSession(JOB_ID, ROUND, SESSION)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        ClientSession(JOB_ID, ROUND, SESSION, SeededRandomness(300))  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="threat must be the job's ThreatModel"):
        ClientSession(JOB_ID, ROUND, SESSION, SeededRandomness(300), None)  # type: ignore[arg-type]

    job = JobConfig(JOB_ID, {"w": [4]}, aggregation=Aggregation("secure", 0.1, 0.1))
    n = 5
    sessions = [
        ClientSession(JOB_ID, ROUND, SESSION, SeededRandomness(300 + u), job.aggregation.threat)
        for u in range(n)
    ]
    roster = make_roster([s.advertise() for s in sessions], n, 1, CONTEXT)
    for s in sessions:
        with pytest.raises(SecureProtocolError, match="threshold t = 1 is below 2"):
            s.on_roster(roster)
