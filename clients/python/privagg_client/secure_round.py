"""One client's secure round over a transport: reads the job's ``SecureRound`` records, runs a
:class:`~privagg_client.secure.ClientSession` through the six phases and writes its
``SecureMessage`` records (docs/secure-aggregation.md). The transport is Kafka in
:class:`~privagg_client.PrivaggClient` and an in-memory fake in the tests."""

from __future__ import annotations

import enum
import logging
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, Union

import numpy as np

from . import wire
from .errors import SecureProtocolError, SecureRoundError, UnmaskRefused
from .job import JobConfig
from .secure import (
    SYSTEM_RANDOMNESS,
    AdvertiseKeys,
    ClientSession,
    Commitments,
    Confirmed,
    Consistency,
    Opened,
    Randomness,
    Roster,
    RosterEntry,
    RoutedShare,
    ShareKeys,
    ShareReceipt,
    Shares,
    SignedSurvivors,
    SurvivorSignature,
    Survivors,
    UnmaskShares,
    quantize,
)
from .secure.distributed import NoisePlan, announcement_problem, encode, pack
from .secure.quantize import secure_generator

if TYPE_CHECKING:
    import numpy.typing as npt

log = logging.getLogger(__name__)

PHASE_NAMES = {
    1: "advertise",
    2: "share",
    3: "receipt",
    4: "masked input",
    5: "consistency",
    6: "unmask",
}
PHASES = len(PHASE_NAMES)
"""A whole secure round: the phases a client takes part in when none of them stops it."""

JobMessage = Union[Opened, Roster, Commitments, Shares, Confirmed, Survivors, Consistency]
ClientMessage = Union[
    AdvertiseKeys,
    ShareKeys,
    ShareReceipt,
    "npt.NDArray[np.uint64]",
    bytes,
    SurvivorSignature,
    UnmaskShares,
]


# -- records ---------------------------------------------------------------------------------


def _client_body(body: ClientMessage) -> dict[str, Any]:
    if isinstance(body, AdvertiseKeys):
        return {
            "encryptionPublicKey": body.encryption_public_key,
            "maskPublicKey": body.mask_public_key,
            "selfMaskCommitment": body.self_mask_commitment,
            "signingPublicKey": body.signing_public_key,
        }
    if isinstance(body, SurvivorSignature):
        return {"signature": body.signature}
    if isinstance(body, UnmaskShares):
        return {
            "selfMaskShares": [{"index": s.index, "share": s.share} for s in body.self_mask_shares],
            "maskKeyShares": [{"index": s.index, "share": s.share} for s in body.mask_key_shares],
        }
    if isinstance(body, ShareReceipt):
        return {"rejected": list(body.rejected)}
    if isinstance(body, np.ndarray):
        return {"values": np.ascontiguousarray(body, dtype="<u8").tobytes()}
    if isinstance(body, bytes):
        return {"values": body}  # words of the round's distributed-noise width, packed
    return {
        "shares": [{"index": s.index, "ciphertext": s.ciphertext} for s in body.shares],
        "commitments": body.commitments,
    }


def _noise_plan(fields: Mapping[str, Any] | None) -> NoisePlan | None:
    """An ``Opened`` message's ``distributedNoise``; SecureProtocolError if it is no valid plan."""
    if fields is None:
        return None
    try:
        return NoisePlan(
            bits=fields["bits"],
            dimension=fields["dimension"],
            padded_dimension=fields["paddedDimension"],
            units_per_clip_norm=fields["unitsPerClipNorm"],
            max_squared_norm=fields["maxSquaredNorm"],
            variance_numerator=fields["varianceNumerator"],
            variance_denominator=fields["varianceDenominator"],
            noise_shares=fields["noiseShares"],
        )
    except ValueError as e:
        raise SecureProtocolError(f"the round's distributed noise is no valid plan: {e}") from e


def encode_secure_message(
    job_id: str, round_number: int, session: bytes, client_id: str, body: ClientMessage
) -> bytes:
    """A single-object-encoded ``SecureMessage``: ``AdvertiseKeys``, ``ShareKeys`` (the sealed
    shares and the Feldman commitments), ``ShareReceipt``, ``MaskedInput`` (the masked words),
    ``SurvivorSignature`` or ``UnmaskShares``."""
    return wire.encode(
        "SecureMessage",
        {
            "jobId": job_id,
            "round": round_number,
            "session": session,
            "clientId": client_id,
            "body": _client_body(body),
        },
    )


@dataclass(frozen=True)
class SecureRoundRecord:
    """A ``SecureRound`` record: its header, and its body's fields as decoded."""

    job_id: str
    round: int
    session: bytes
    fields: Mapping[str, Any]

    def body(self) -> JobMessage:
        """The body as a message; :class:`SecureProtocolError` for a malformed roster."""
        f = self.fields
        if "advertiseDeadlineMillis" in f:
            return Opened(
                f["advertiseDeadlineMillis"],
                f["shareDeadlineMillis"],
                f["confirmDeadlineMillis"],
                f["maskedInputDeadlineMillis"],
                f["consistencyDeadlineMillis"],
                f["unmaskDeadlineMillis"],
                f["clipNorm"],
                _noise_plan(f.get("distributedNoise")),
            )
        if "entries" in f:
            entries = tuple(
                RosterEntry(
                    e["encryptionPublicKey"],
                    e["maskPublicKey"],
                    e["selfMaskCommitment"],
                    e["signingPublicKey"],
                )
                for e in f["entries"]
            )
            return Roster(entries, f["degree"], f["threshold"], tuple(f["permutation"]))
        if "commitments" in f:
            return Commitments(f["sender"], f["commitments"])
        if "recipient" in f:
            routed = tuple(RoutedShare(s["sender"], s["ciphertext"]) for s in f["shares"])
            return Shares(f["recipient"], routed)
        if "confirmed" in f:
            cuts = tuple((c["lo"], c["hi"]) for c in f["cuts"])
            return Confirmed(tuple(f["confirmed"]), cuts)
        if "signatures" in f:
            signed = tuple(SignedSurvivors(s["index"], s["signature"]) for s in f["signatures"])
            return Consistency(signed)
        return Survivors(tuple(f["shared"]), tuple(f["maskedInput"]))


def decode_secure_round(value: bytes) -> SecureRoundRecord:
    """Reads a single-object-encoded ``SecureRound``."""
    d = wire.decode("SecureRound", value)
    return SecureRoundRecord(d["jobId"], d["round"], d["session"], d["body"])


# -- the transport ---------------------------------------------------------------------------


class SecureTransport(Protocol):
    """What a secure round needs from Kafka (or a fake of it)."""

    def now(self) -> float:
        """Seconds since the epoch by this machine's clock."""

    def send(self, value: bytes) -> None:
        """Writes ``value`` to the job's updates topic; returns once the broker acknowledged it,
        else raises :class:`SendError`."""

    def receive(self, timeout: float) -> Sequence[bytes]:
        """The next committed records of the job's secure topic, in order, waiting at most
        ``timeout`` seconds for one; empty when none arrived."""


# -- the round -------------------------------------------------------------------------------


@dataclass(frozen=True)
class SecureRoundResult:
    """A secure round this client took part in to the end.

    ``index``: its roster index; ``masked_with``: the neighbours its masked input carries
    pairwise masks with; ``rejected_shares``: routed shares it could not use, by sender, with
    the reason; ``survivors``: how many clients' masked inputs the job counted (U3).

    A client that stopped early (``phases`` below 6) knows less: after phase 1 ``index`` is -1,
    before phase 4 ``masked_with`` is empty, and ``survivors`` is 0. A client the roster does not
    list (the job's sampling, the round's cap or a participation limit left it out) gets ``index``
    -1 and nothing else, as Java's client does."""

    round_number: int
    session: bytes
    index: int
    masked_with: tuple[int, ...]
    rejected_shares: Mapping[int, str]
    survivors: int


class _Step(enum.IntEnum):
    WAIT_OPENED = 0
    WAIT_ROSTER = 1
    WAIT_SHARES = 2
    WAIT_CONFIRMED = 3
    WAIT_SURVIVORS = 4
    WAIT_CONSISTENCY = 5


_POLL_SECONDS = 0.5


class _SecureRound:
    """The driver's state: the newest session of the round, and which job message it awaits."""

    def __init__(
        self,
        transport: SecureTransport,
        job: JobConfig,
        client_id: str,
        round_number: int,
        values: npt.NDArray[np.float64],
        open_timeout: float,
        grace: float,
        randomness: Randomness,
        rng: np.random.Generator | None,
        phases: int,
        masked_rounds: str | os.PathLike[str] | None,
    ) -> None:
        self._transport = transport
        self._job = job
        self._client_id = client_id
        self._round = round_number
        self._values = values
        self._open_timeout = open_timeout
        self._grace = grace
        self._randomness = randomness
        self._rng = rng
        self._roster_size: int | None = None
        self._phases = phases
        self._masked_rounds = masked_rounds
        self._step = _Step.WAIT_OPENED
        self._opened: Opened | None = None
        self._session_id = b""
        self._session: ClientSession | None = None
        self._missed_advertise = False
        self._survivors: Survivors | None = None
        self._commitments: dict[int, bytes] = {}

    def run(self) -> SecureRoundResult:
        started = self._transport.now()
        while True:
            values = self._transport.receive(self._poll_timeout(started))
            for value in values:
                result = self._handle(decode_secure_round(value))
                if result is not None:
                    return result
            self._check_progress(started, caught_up=not values)

    def _fail(self, phase: int, reason: str) -> SecureRoundError:
        return SecureRoundError(
            f"secure aggregation of round {self._round} of job {self._job.job_id} failed in "
            f"phase {phase} ({PHASE_NAMES[phase]}): {reason}",
            phase,
        )

    def _send(self, body: ClientMessage) -> None:
        self._transport.send(
            encode_secure_message(
                self._job.job_id, self._round, self._session_id, self._client_id, body
            )
        )

    def _before(self, deadline_millis: int, phase: int, what: str) -> None:
        """Raises when ``deadline_millis`` passed: the job would reject what this client sends."""
        late = self._transport.now() - deadline_millis / 1000
        if late >= 0:
            raise self._fail(
                phase, f"{what} {late:.1f} s after the phase's deadline; the job would reject it"
            )

    # -- waiting -----------------------------------------------------------------------------

    def _wait_limit(self, started: float) -> float:
        """When the job message this client awaits is overdue (seconds since the epoch)."""
        if self._opened is None:
            return started + self._open_timeout
        deadline = {
            _Step.WAIT_ROSTER: self._opened.advertise_deadline_millis,
            _Step.WAIT_SHARES: self._opened.share_deadline_millis,
            _Step.WAIT_CONFIRMED: self._opened.confirm_deadline_millis,
            _Step.WAIT_SURVIVORS: self._opened.masked_input_deadline_millis,
            _Step.WAIT_CONSISTENCY: self._opened.consistency_deadline_millis,
        }[self._step]
        return deadline / 1000 + self._grace

    def _poll_timeout(self, started: float) -> float:
        return max(0.0, min(_POLL_SECONDS, self._wait_limit(started) - self._transport.now()))

    def _check_progress(self, started: float, caught_up: bool) -> None:
        if self._missed_advertise and caught_up:
            raise self._fail(
                1,
                "the round's advertise deadline had passed when this client read its Opened "
                "record (train faster, or call send_update sooner after the round opens)",
            )
        if self._transport.now() < self._wait_limit(started):
            return
        if self._step == _Step.WAIT_OPENED:
            raise self._fail(
                1,
                f"the round's Opened record did not arrive on topic {self._job.topics.secure} "
                f"within {self._open_timeout:g} s (is the job running in secure mode?)",
            )
        awaited = {
            _Step.WAIT_ROSTER: (2, "Roster", "advertise"),
            _Step.WAIT_SHARES: (3, "Shares for this client", "share"),
            _Step.WAIT_CONFIRMED: (4, "Confirmed", "receipt"),
            _Step.WAIT_SURVIVORS: (5, "Survivors", "masked input"),
            _Step.WAIT_CONSISTENCY: (6, "Consistency", "consistency"),
        }
        phase, message, deadline = awaited[self._step]
        raise self._fail(
            phase,
            f"the job's {message} did not arrive within {self._grace:g} s after the {deadline} "
            "deadline",
        )

    # -- the job's messages ------------------------------------------------------------------

    def _handle(self, record: SecureRoundRecord) -> SecureRoundResult | None:
        if record.job_id != self._job.job_id or record.round != self._round:
            return None
        if "advertiseDeadlineMillis" in record.fields:
            body = record.body()
            assert isinstance(body, Opened)
            return self._on_opened(record.session, body)
        if record.session != self._session_id or self._missed_advertise:
            return None  # an earlier session of the round, or one this client is not in
        try:
            body = record.body()
        except SecureProtocolError as e:
            raise self._fail(2, f"the job's Roster is malformed: {e}") from e
        if isinstance(body, Roster) and self._step == _Step.WAIT_ROSTER:
            return self._on_roster(body)
        if isinstance(body, Commitments) and self._step == _Step.WAIT_SHARES:
            # Every dealer's, before the Shares (one partition per job keeps the order); kept
            # for the neighbours only, since every dealer's would be O(n t) of memory.
            assert self._session is not None
            if body.sender not in self._session.neighbours:
                return None
            before = self._commitments.setdefault(body.sender, body.commitments)
            if before != body.commitments:
                # Checked against two polynomials, one dealer's shares could each pass and agree
                # on nothing: a job that shows holders different commitments is refused.
                raise self._fail(
                    3, f"the job published two different commitments for client {body.sender}"
                )
            return None
        if isinstance(body, Shares) and self._step == _Step.WAIT_SHARES:
            return self._on_shares(body)
        if isinstance(body, Confirmed) and self._step == _Step.WAIT_CONFIRMED:
            return self._on_confirmed(body)
        if isinstance(body, Survivors) and self._step <= _Step.WAIT_SURVIVORS:
            return self._on_survivors(body)
        if isinstance(body, Consistency) and self._step == _Step.WAIT_CONSISTENCY:
            return self._on_consistency(body)
        return None

    def _stopped(self, phase: int) -> SecureRoundResult | None:
        """The result of a client that stops after ``phase`` (``phases``), else None."""
        if phase < self._phases:
            return None
        assert self._session is not None
        log.info(
            "job %s round %d: %s stops after phase %d (%s), as a client dropping out",
            self._job.job_id,
            self._round,
            self._client_id,
            phase,
            PHASE_NAMES[phase],
        )
        return SecureRoundResult(
            self._round,
            self._session_id,
            self._session.index if phase >= 2 else -1,
            self._session.masked_with if phase >= 4 else (),
            self._session.rejected_shares,
            0,
        )

    def _on_opened(self, session: bytes, opened: Opened) -> SecureRoundResult | None:
        if session == self._session_id:
            return None
        if self._step >= _Step.WAIT_SURVIVORS:
            raise self._fail(
                5 if self._step == _Step.WAIT_SURVIVORS else 6,
                "the job opened the round again with a new session (it restored from a "
                "checkpoint) after this client sent its masked input; it does not mask the "
                "same update in a second session, whose sum the job could difference against "
                "the first",
            )
        self._opened, self._session_id = opened, session
        self._commitments = {}
        self._session = ClientSession(
            self._job.job_id, self._round, session, self._randomness, self._job.aggregation.threat
        )
        self._step = _Step.WAIT_ROSTER
        self._missed_advertise = self._transport.now() >= opened.advertise_deadline_millis / 1000
        if self._missed_advertise:
            return None
        self._send(self._session.advertise())
        return self._stopped(1)

    def _on_roster(self, roster: Roster) -> SecureRoundResult | None:
        self._roster_size = len(roster.entries)
        assert self._session is not None and self._opened is not None
        mine = self._session.advertise().encryption_public_key
        if roster.degree == 0 or all(e.encryption_public_key != mine for e in roster.entries):
            # The job's sampling, the round's cap or a participation limit left it out (or its keys
            # came late), or the roster is too small for a graph (degree 0): like an unsampled
            # plaintext update, not an error.
            log.info(
                "job %s round %d: the roster does not list %s; it takes no further part",
                self._job.job_id,
                self._round,
                self._client_id,
            )
            return SecureRoundResult(self._round, self._session_id, -1, (), {}, 0)
        try:
            sealed = self._session.on_roster(roster)
        except SecureProtocolError as e:
            raise self._fail(2, str(e)) from e
        self._before(self._opened.share_deadline_millis, 2, "the roster arrived")
        self._send(ShareKeys(sealed, self._session.commitments))
        self._step = _Step.WAIT_SHARES
        return self._stopped(2)

    def _on_shares(self, shares: Shares) -> SecureRoundResult | None:
        assert self._session is not None and self._opened is not None
        if shares.recipient != self._session.index:
            return None
        self._session.on_shares(
            Shares(
                shares.recipient,
                tuple(
                    RoutedShare(r.sender, r.ciphertext, self._commitments.get(r.sender, b""))
                    for r in shares.shares
                ),
            )
        )
        for sender, reason in self._session.rejected_shares.items():
            log.warning(
                "job %s round %d: shares from client %d: %s",
                self._job.job_id,
                self._round,
                sender,
                reason,
            )
        self._before(self._opened.confirm_deadline_millis, 3, "this client's shares arrived")
        self._send(ShareReceipt(self._session.receipt()))
        self._step = _Step.WAIT_CONFIRMED
        return self._stopped(3)

    def _on_confirmed(self, confirmed: Confirmed) -> SecureRoundResult | None:
        assert self._session is not None and self._opened is not None
        try:
            self._session.on_confirmed(confirmed.confirmed, confirmed.cuts)
        except SecureProtocolError as e:
            raise self._fail(4, str(e)) from e
        deadline = self._opened.masked_input_deadline_millis
        self._before(deadline, 4, "the Confirmed message arrived")
        plan = self._opened.distributed_noise
        problem = announcement_problem(self._job.aggregation.distributed, plan)
        if problem is not None:
            raise self._fail(4, problem + "; no masked input is sent")
        x: npt.NDArray[np.int64] | npt.NDArray[np.uint64]
        if plan is None:
            x = quantize(self._values, self._opened.clip_norm, self._rng)
        else:
            rng = self._rng if self._rng is not None else secure_generator()
            x = encode(
                self._values, self._opened.clip_norm, plan, self._job.job_id, self._round, rng
            )
        try:
            words = self._session.masked_input(x)
        except SecureProtocolError as e:
            raise self._fail(4, str(e)) from e
        y: npt.NDArray[np.uint64] | bytes = words if plan is None else pack(words, plan.bits)
        if self._masked_rounds is not None:
            problem = claim_masked_round(
                self._masked_rounds, self._job.job_id, self._round, self._session_id.hex()
            )
            if problem is not None:
                raise self._fail(4, problem)
        self._before(deadline, 4, "the masked input was ready")
        self._send(y)
        self._step = _Step.WAIT_SURVIVORS
        return self._stopped(4)

    def _on_survivors(self, survivors: Survivors) -> SecureRoundResult | None:
        assert self._session is not None and self._opened is not None
        if self._step == _Step.WAIT_ROSTER:
            raise self._fail(2, "the job went on to unmasking without a roster this client read")
        if self._step == _Step.WAIT_SHARES:
            raise self._fail(
                3, "the job routed no shares to this client (its ShareKeys were not accepted)"
            )
        if self._step == _Step.WAIT_CONFIRMED:
            raise self._fail(
                4, "the job went on to unmasking without a Confirmed message this client read"
            )
        index = self._session.index
        if index not in survivors.masked_input:
            raise self._fail(
                4, f"the job did not count this client's masked input (client {index} is not in U3)"
            )
        floor = self._job.aggregation.distributed
        if floor is not None and self._roster_size is not None:
            colluders = self._job.aggregation.threat.colluders(self._roster_size)
            honest = len(survivors.masked_input) - colluders
            if honest < floor.fewest_honest_inputs:
                raise self._fail(
                    5,
                    f"the survivor list holds {len(survivors.masked_input)} masked inputs of a"
                    f" roster of {self._roster_size}, at least {honest} of them honest, fewer than"
                    f" the {floor.fewest_honest_inputs} noise shares the spec sized each share"
                    " for; no signature and no shares are sent",
                )
        try:
            signature = self._session.sign_survivors(survivors.shared, survivors.masked_input)
        except UnmaskRefused as e:
            raise self._fail(
                5, f"this client refuses to sign the survivor list, and reveals no shares: {e}"
            ) from e
        self._before(self._opened.consistency_deadline_millis, 5, "the survivors arrived")
        self._send(SurvivorSignature(signature))
        self._survivors = survivors
        self._step = _Step.WAIT_CONSISTENCY
        return self._stopped(5)

    def _on_consistency(self, consistency: Consistency) -> SecureRoundResult:
        assert self._session is not None and self._opened is not None
        assert self._survivors is not None
        try:
            revealed = self._session.unmask(consistency.by_index())
        except UnmaskRefused as e:
            raise self._fail(6, f"this client refuses to reveal shares: {e}") from e
        self._before(self._opened.unmask_deadline_millis, 6, "the survivors' signatures arrived")
        self._send(revealed)
        return SecureRoundResult(
            self._round,
            self._session_id,
            self._session.index,
            self._session.masked_with,
            self._session.rejected_shares,
            len(set(self._survivors.masked_input)),
        )


def claim_masked_round(
    path: str | os.PathLike[str], job_id: str, round_number: int, session: str
) -> str | None:
    """Records in ``path`` (job id, round, session in hex, tab-separated, one line per round,
    forced to disk) that this client masks its update of the round in ``session``, so that after
    a restart it never masks the round's update again under another session: two masked sums that
    differ by one update would reveal it. Returns why not when the file records another session
    of the round; the same session again is a retry and fine."""
    key = f"{job_id}\t{round_number}\t"
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except FileNotFoundError:
        lines = []
    for line in lines:
        if line.startswith(key):
            recorded = line[len(key):]
            if recorded == session:
                return None
            return (
                f"this client already masked an update for round {round_number} of job {job_id} "
                f"in session {recorded} ({os.fspath(path)}); the job opened the round again "
                f"(session {session}) and a second masked update could be subtracted from the "
                "first: join the next round"
            )
    with open(path, "a", encoding="utf-8") as f:
        f.write(key + session + "\n")
        f.flush()
        os.fsync(f.fileno())
    return None


def send_secure_update(
    transport: SecureTransport,
    job: JobConfig,
    client_id: str,
    round_number: int,
    values: npt.ArrayLike,
    *,
    open_timeout: float = 30.0,
    grace: float = 30.0,
    randomness: Randomness = SYSTEM_RANDOMNESS,
    rng: np.random.Generator | None = None,
    phases: int = PHASES,
    masked_rounds: str | os.PathLike[str] | None = None,
) -> SecureRoundResult:
    """Takes part in round ``round_number``'s secure aggregation with ``values`` (the update's
    d values in the spec's tensor order) and returns once this client's ``UnmaskShares`` were
    acknowledged.

    It follows the newest session the job opened for the round, waiting ``open_timeout``
    seconds for its ``Opened`` record, and each later job message until ``grace`` seconds after
    the deadline of the phase before (the job writes them at the deadlines, committed at its
    next checkpoint). Raises :class:`SecureRoundError` naming the phase that failed and why.

    ``phases`` below 6 (1 to 5) simulates a client dropping out, for tests and simulations of
    the job's dropout tolerance (as the Java client's ``sendSecure(round, clientId, tensors,
    phases)``): it returns once the message of phase ``phases`` was acknowledged and sends
    nothing more for the round.

    ``masked_rounds``: a file that remembers, across restarts of this client, the session each
    round's update was masked in (:func:`claim_masked_round`); without it the guard against
    masking one round's update in two sessions lives in this call only.
    """
    if isinstance(phases, bool) or not isinstance(phases, int) or not 1 <= phases <= PHASES:
        raise ValueError(f"phases must be an integer in [1, {PHASES}], was {phases!r}")
    flat = np.asarray(values, dtype=np.float64).ravel()
    return _SecureRound(
        transport,
        job,
        client_id,
        round_number,
        flat,
        open_timeout,
        grace,
        randomness,
        rng,
        phases,
        masked_rounds,
    ).run()
