"""What a client checks of the graph a ``Roster`` states (docs/secure-aggregation.md, "The job
spec"): the neighbourhood size k and threshold t are the job's to derive from its rates, never the
server's to pick, so a client refuses a roster whose (k, t) does not meet the bounds the job's
rates promise. The job picks (k, t) with ``RoundThresholds`` (Java); this module checks the
privacy half of those bounds exactly, with integer arithmetic, at half the job's margin (2^-40
where the job keeps 2^-41), so a roster the job chose always passes."""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..errors import SecureProtocolError

ADVERSARIES = ("semi-malicious-server", "curious-server")
_SLACK = 1e-14
_BOUND = 2**40


@dataclass(frozen=True)
class ThreatModel:
    """The spec's ``aggregation`` rates and adversary: the fraction of a roster that may collude
    with the server, the fraction that may fail to answer, and which server they guard against."""

    adversarial_client_rate: float = 0.1
    max_dropout_rate: float = 0.1
    adversary: str = "semi-malicious-server"

    def __post_init__(self) -> None:
        if self.adversary not in ADVERSARIES:
            raise SecureProtocolError(
                f"adversary must be one of {', '.join(ADVERSARIES)}, was {self.adversary!r}"
            )

    def colluders(self, n: int) -> int:
        """A: the colluders a roster of n may hold."""
        return math.floor((self.adversarial_client_rate + _SLACK) * n)

    def dropouts(self, n: int) -> int:
        """D: the clients of a roster of n that may fail to answer."""
        return math.floor((self.max_dropout_rate + _SLACK) * n)


def _upper_tail(total: int, marked: int, sampled: int, at_least: int) -> tuple[int, int]:
    """P[X >= at_least] of a hypergeometric draw, as an exact (numerator, denominator)."""
    numerator = sum(
        math.comb(marked, i) * math.comb(total - marked, sampled - i)
        for i in range(max(at_least, 0), min(marked, sampled) + 1)
    )
    return numerator, math.comb(total, sampled)


def rejection_limit(n: int, k: int, threat: ThreatModel) -> int:
    """r for a roster of ``n`` with neighbourhoods of ``k`` (``k == n``: the complete graph): the
    most colluders a client's k - 1 other holders hold but with probability 2^-41 / n (the
    colluders drawn from the n - 1 others), A on the complete graph. The job cuts no more of an
    honest client's pairs than that (colluders' false complaints), so a client refuses a
    ``Confirmed`` that cuts more of the pairs it did not reject itself."""
    a = threat.colluders(n)
    if k == n:
        return a
    total, sampled = n - 1, k - 1
    denominator = math.comb(total, sampled)
    # The smallest x with n P[X > x] 2^41 <= 1: add the upper tail from the top down.
    tail = 0
    x = min(a, sampled)
    while x >= 0:
        with_x = tail + math.comb(a, x) * math.comb(total - a, sampled - x)
        if n * with_x * 2 * _BOUND > denominator:
            return x
        tail = with_x
        x -= 1
    return 0


def signature_threshold(n: int, threat: ThreatModel | None) -> int:
    """T: the valid signatures on one survivor statement a client needs before it reveals a
    share (Java ``RoundThresholds.signatureThreshold``), ``(n + A) // 2 + 1``. Each honest client
    signs one statement, so two statements with T signers each would need 2T <= n + A: with this
    T at most one is ever answered, whatever each client was shown. Against a curious server,
    which shows every client the one list it has, it is 1. ``threat`` None (sessions of tests
    that take any graph): ``n // 2 + 1``."""
    if threat is None:
        return n // 2 + 1
    if threat.adversary != "semi-malicious-server":
        return 1
    return (n + threat.colluders(n)) // 2 + 1


def lost_clients(n: int, threat: ThreatModel) -> int:
    """L = D + 1, at most n: the clients that may not answer, a margin client included."""
    return min(n, threat.dropouts(n) + 1)


def check_graph(n: int, k: int, t: int, threat: ThreatModel) -> None:
    """Raises :class:`SecureProtocolError` unless a roster of ``n`` with neighbourhoods of ``k``
    (``k == n``: the complete graph) and threshold ``t`` keeps every client's input from the
    server and its colluders (``threat``) but with probability 2^-40: on the complete graph for
    every placement (2t > n + A against a semi-malicious server, t > A against a curious one);
    on a ring, the union over clients of P[colluding neighbours reach 2t - k (or t)], and of the
    honest survivors' graph splitting (A + D clients lost), each at most 2^-40. And unless the
    consistency round can succeed with L clients failing (T <= n - L), as the job's chooser
    requires: it gives such a roster no graph."""
    a = threat.colluders(n)
    semi = threat.adversary == "semi-malicious-server"
    reach = 2 * t - k if semi else t
    if t < 2:
        raise SecureProtocolError(f"the roster's threshold t = {t} is below 2")
    signers, failing = signature_threshold(n, threat), lost_clients(n, threat)
    if signers > n - failing:
        raise SecureProtocolError(
            f"a roster of {n} gets no graph under {threat}: the survivor list needs "
            f"{signers} signatures ((n + A) / 2 + 1, A = {a}), more than the {n - failing} "
            f"clients left when {failing} fail to answer (the job's dropouts plus one)"
        )
    if k == n:
        if a >= reach:
            raise SecureProtocolError(
                f"the roster's complete graph of {n} at t = {t} lets {a} colluders "
                f"({threat.adversary}) reach a client's secrets"
            )
        return
    numerator, denominator = _upper_tail(n - 1, a, k - 1, reach)
    if n * numerator * _BOUND > denominator:
        raise SecureProtocolError(
            f"the roster's k = {k}, t = {t} for {n} clients lets the colluders of "
            f"{threat} reach some client's secrets with probability above 2^-40"
        )
    lost = a + threat.dropouts(n)
    degree = k - 1
    if degree <= lost:
        pairs = n * (n - degree - 1)  # twice the number of gap pairs
        if pairs * math.comb(lost, degree) * _BOUND > 2 * math.comb(n, degree):
            raise SecureProtocolError(
                f"the roster's ring of k = {k} for {n} clients falls apart when the colluders "
                f"and dropouts of {threat} leave, with probability above 2^-40"
            )
