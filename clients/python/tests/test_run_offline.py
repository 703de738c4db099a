"""PrivaggClient.run against a simulated job, offline: a fake clock, and fake Kafka consumer and
producer in place of librdkafka's, driven by a FakeJob that opens rounds on a fixed schedule,
takes the updates the broker appends before a round's deadline, releases each round's model
(the base plus the sum of its updates) and announces the next round, until its budget allows
no more rounds. The client's own code (poll, the waits, send_update, encode_update) runs as is."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest
from confluent_kafka import TIMESTAMP_CREATE_TIME, TIMESTAMP_LOG_APPEND_TIME, KafkaError

import privagg_client.client
import privagg_client.records
from privagg_client import (
    BudgetSpentError,
    GlobalModel,
    JobConfig,
    LateUpdateError,
    PrivaggClient,
    PrivaggTimeout,
    RunResult,
    SendError,
    TensorShapeError,
    UpdateReceipt,
    wire,
)

JOB = JobConfig("j", {"w": [2]})
ROUND_SECONDS = 5.0
START = 1_000_000.0  # the fake clock's time when round 1 opens


class FakeClock:
    """Stands in for the ``time`` module in privagg_client.client and privagg_client.records."""

    def __init__(self, now: float) -> None:
        self.now = now

    def time(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += max(0.0, seconds)


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> FakeClock:
    fake = FakeClock(START)
    monkeypatch.setattr(privagg_client.client, "time", fake)
    monkeypatch.setattr(privagg_client.records, "time", fake)
    return fake


def _privacy(round_number: int) -> dict[str, Any]:
    return {
        "epsilon": 0.5 * round_number,
        "delta": 1e-5,
        "accountant": "rdp",
        "noiseMultiplier": 1.0,
        "clipNorm": 1.0,
        "samplingRate": 1.0,
        "samplingMode": "none",
        "noiseSource": "secure",
        "adjacency": "add-remove-one",
        "budgetEpsilon": 10.0,
    }


@dataclass
class Published:
    time: float
    topic: str
    key: bytes
    value: bytes


@dataclass
class FakeJob:
    """The job's public side on a fixed schedule: round r opens at START + (r - 1) * length (plus
    ``announce_delay``, as a checkpoint delays it) and closes at START + r * length.

    ``last_round``: the last round the budget allows (None: no end); ``release_last``: False
    when the budget runs out at the release of ``last_round`` rather than before opening the
    next; ``unreleased``: rounds a minimum cohort keeps from being released; ``says_spent``: the
    job then writes its public budget-spent record, as privagg does since RoundAnnouncement v2
    (False: as an older job, which only stops announcing)."""

    clock: FakeClock
    last_round: int | None = None
    release_last: bool = True
    unreleased: frozenset[int] = frozenset()
    announce_delay: float = 0.0
    says_spent: bool = False
    publish_models: bool = True
    length: float = ROUND_SECONDS
    published: list[Published] = field(default_factory=list)
    accepted: dict[int, list[np.ndarray]] = field(default_factory=dict)
    rejected: list[tuple[int, str]] = field(default_factory=list)
    open_round: int = 0
    ended: bool = False
    model_round: int = 0
    model: np.ndarray = field(default_factory=lambda: np.zeros(2, dtype=np.float32))

    def __post_init__(self) -> None:
        self._release(0, START)
        self._announce(1, START)

    def deadline(self, round_number: int) -> float:
        return START + round_number * self.length

    def _announce(self, round_number: int, at: float) -> None:
        self.open_round = round_number
        value = wire.encode(
            "RoundAnnouncement",
            {
                "jobId": JOB.job_id,
                "round": round_number,
                "baseModelRound": self.model_round,
                "deadlineMillis": round(self.deadline(round_number) * 1000),
                "budgetSpent": False,
            },
        )
        self.published.append(Published(at, JOB.topics.rounds, b"j", value))

    def _end(self, first_unopened: int, at: float) -> None:
        self.ended = True
        if self.says_spent:
            value = wire.encode(
                "RoundAnnouncement",
                {
                    "jobId": JOB.job_id,
                    "round": first_unopened,
                    "baseModelRound": self.model_round,
                    "deadlineMillis": 0,
                    "budgetSpent": True,
                },
            )
            self.published.append(Published(at, JOB.topics.rounds, b"j", value))

    def _release(self, round_number: int, at: float) -> None:
        self.model_round = round_number
        if not self.publish_models:
            return
        value = wire.encode(
            "GlobalModel",
            {
                "jobId": JOB.job_id,
                "round": round_number,
                "tensors": [{"name": "w", "shape": [2], "data": self.model.astype("<f4").tobytes()}],
                "privacy": _privacy(round_number),
            },
        )
        self.published.append(Published(at, JOB.topics.models, b"j", value))
        # Another job's records on the same topic are skipped by key.
        self.published.append(Published(at, JOB.topics.models, b"other-job", b"not ours"))

    def next_event(self) -> float:
        return float("inf") if self.ended else self.deadline(self.open_round) + self.announce_delay

    def advance_to(self, t: float) -> None:
        """Closes every round whose deadline (plus ``announce_delay``) is at or before ``t``."""
        while not self.ended and self.next_event() <= t:
            r = self.open_round
            at = self.deadline(r) + self.announce_delay
            exhausted_now = self.last_round is not None and r >= self.last_round
            if exhausted_now and not self.release_last:
                self._end(r + 1, at)
                return
            if r not in self.unreleased:
                self.model = self.model + sum(self.accepted.get(r, []), np.zeros(2, np.float32))
                self._release(r, at)
            if exhausted_now:
                self._end(r + 1, at)
                return
            self._announce(r + 1, at)

    def receive(self, value: bytes, appended_at: float) -> None:
        self.advance_to(appended_at)
        update = wire.decode("ClientUpdate", value)
        r = update["round"]
        if self.ended:
            self.rejected.append((r, "BUDGET_EXHAUSTED"))
        elif r != self.open_round or appended_at >= self.deadline(r):
            self.rejected.append((r, "STALE"))
        else:
            [tensor] = update["tensors"]
            self.accepted.setdefault(r, []).append(np.frombuffer(tensor["data"], "<f4"))


class FakeMessage:
    def __init__(self, p: Published, offset: int) -> None:
        self._p, self._offset = p, offset

    def error(self) -> None:
        return None

    def key(self) -> bytes:
        return self._p.key

    def value(self) -> bytes:
        return self._p.value

    def topic(self) -> str:
        return self._p.topic

    def partition(self) -> int:
        return 0

    def offset(self) -> int:
        return self._offset


@dataclass
class FakeTopic:
    error: None = None
    partitions: dict[int, object] = field(default_factory=lambda: {0: object()})


class FakeMetadata:
    def __init__(self, topics: dict[str, FakeTopic]) -> None:
        self.topics = topics


class FakeConsumer:
    """Reads the job's published records; a consume waits (on the fake clock) until the next
    record is published or its timeout passes."""

    def __init__(self, job: FakeJob, topics_exist: bool = True) -> None:
        self.job = job
        self.topics_exist = topics_exist
        self.read = 0

    def list_topics(self, timeout: float) -> FakeMetadata:
        if not self.topics_exist:
            self.job.clock.sleep(timeout)
            return FakeMetadata({})
        return FakeMetadata({JOB.topics.rounds: FakeTopic(), JOB.topics.models: FakeTopic()})

    def assign(self, partitions: list[Any]) -> None:
        assert {p.topic for p in partitions} == {JOB.topics.rounds, JOB.topics.models}

    def consume(self, num_messages: int, timeout: float) -> list[FakeMessage]:
        clock = self.job.clock
        self.job.advance_to(clock.now)
        if not self._due(clock.now):
            pending = [p.time for p in self.job.published[self.read :]]
            next_event = min([self.job.next_event(), *pending])
            clock.now = min(clock.now + timeout, max(clock.now, next_event))
            self.job.advance_to(clock.now)
        due = [p for p in self.job.published[self.read : self.read + num_messages]]
        due = due[: next((i for i, p in enumerate(due) if p.time > clock.now), len(due))]
        out = [FakeMessage(p, i) for i, p in enumerate(due, self.read)]
        self.read += len(out)
        return out

    def _due(self, now: float) -> bool:
        """Whether a published record not read yet is public by ``now``."""
        return self.read < len(self.job.published) and self.job.published[self.read].time <= now

    def close(self) -> None:
        pass


@dataclass
class FakeDelivered:
    """A delivery report: where the broker appended a record, and its timestamp."""

    appended_at: float
    offset_: int
    timestamp_type: int = TIMESTAMP_LOG_APPEND_TIME

    def timestamp(self) -> tuple[int, int]:
        return self.timestamp_type, round(self.appended_at * 1000)

    def partition(self) -> int:
        return 0

    def offset(self) -> int:
        return self.offset_


class FakeProducer:
    """Appends to the job ``append_delay`` seconds after the fake clock's time (a slow network, or
    a broker whose clock is ahead; negative: behind). ``refuse``: the broker refuses the record;
    ``unacknowledged``: no acknowledgement arrives; ``create_time``: the topic keeps the producer's
    timestamps (CreateTime) instead of stamping its append time."""

    def __init__(
        self,
        job: FakeJob,
        refuse: bool = False,
        unacknowledged: bool = False,
        append_delay: float = 0.0,
        create_time: bool = False,
    ) -> None:
        self.job = job
        self.refuse = refuse
        self.unacknowledged = unacknowledged
        self.append_delay = append_delay
        self.create_time = create_time
        self.pending: list[tuple[bytes, Callable[[KafkaError | None, object], None]]] = []
        self.sent: list[bytes] = []

    def produce(
        self,
        topic: str,
        value: bytes,
        key: bytes,
        on_delivery: Callable[[KafkaError | None, object], None],
    ) -> None:
        assert topic == JOB.topics.updates and key == b"c"
        self.pending.append((value, on_delivery))

    def flush(self, timeout: float) -> int:
        if self.unacknowledged:
            self.job.clock.sleep(timeout)
            return len(self.pending)
        for value, on_delivery in self.pending:
            if self.refuse:
                on_delivery(KafkaError(KafkaError.MSG_SIZE_TOO_LARGE, "too large"), None)
            else:
                self.sent.append(value)
                appended_at = self.job.clock.now + self.append_delay
                self.job.receive(value, appended_at)
                kind = TIMESTAMP_CREATE_TIME if self.create_time else TIMESTAMP_LOG_APPEND_TIME
                on_delivery(None, FakeDelivered(appended_at, len(self.sent) - 1, kind))
        self.pending.clear()
        return 0


def make_client(
    job: FakeJob, topics_exist: bool = True, job_config: JobConfig = JOB, **producer: Any
) -> tuple[PrivaggClient, FakeProducer]:
    client = PrivaggClient(job_config, "fake:9092", "c")
    client._consumer = FakeConsumer(job, topics_exist)
    fake_producer = FakeProducer(job, **producer)
    client._producer = fake_producer
    return client, fake_producer


@dataclass
class Trainer:
    """A train_fn that records its calls and returns ``step`` for every coordinate; it takes
    ``seconds[i]`` of the fake clock on its i-th call."""

    clock: FakeClock
    step: float = 1.0
    seconds: list[float] = field(default_factory=list)
    calls: list[tuple[int, int, list[float]]] = field(default_factory=list)

    def __call__(self, base: GlobalModel, round_number: int) -> Mapping[str, Any]:
        self.calls.append((base.round, round_number, base.tensors["w"].tolist()))
        if len(self.calls) <= len(self.seconds):
            self.clock.sleep(self.seconds[len(self.calls) - 1])
        return {"w": np.full(2, self.step)}


def test_run_takes_part_in_n_rounds_training_on_each_base_model(clock: FakeClock) -> None:
    job = FakeJob(clock)
    client, producer = make_client(job)
    train = Trainer(clock)
    sent: list[int] = []

    result = client.run(train, rounds=3, on_sent=sent.append)

    assert result == RunResult((1, 2, 3), (), result.model, job_ended=False)
    # Each round trains on the model the previous one released, which holds its update.
    assert train.calls == [(0, 1, [0, 0]), (1, 2, [1, 1]), (2, 3, [2, 2])]
    assert sent == [1, 2, 3] and len(producer.sent) == 3
    assert sorted(job.accepted) == [1, 2, 3] and job.rejected == []
    # It waited for the model of its last round.
    assert result.model is not None and result.model.round == 3
    np.testing.assert_array_equal(result.model.tensors["w"], [3, 3])
    assert clock.now == pytest.approx(START + 3 * ROUND_SECONDS)


def test_on_sent_is_called_after_the_broker_acknowledged(clock: FakeClock) -> None:
    job = FakeJob(clock)
    client, producer = make_client(job)
    acknowledged: list[int] = []

    client.run(Trainer(clock), rounds=2, on_sent=lambda r: acknowledged.append(len(producer.sent)))

    assert acknowledged == [1, 2]


def test_run_joins_the_newest_open_round_and_skips_one_with_too_little_time_left(
    clock: FakeClock,
) -> None:
    job = FakeJob(clock)
    clock.now = START + 2 * ROUND_SECONDS + 2.0  # round 3 is open, 3 s left
    client, _ = make_client(job)
    train = Trainer(clock)

    result = client.run(train, rounds=1, min_seconds_left=3.5)

    assert result.rounds == (4,) and train.calls == [(3, 4, [0, 0])]

    clock.now = START + 5 * ROUND_SECONDS + 2.0  # round 6 is open, 3 s left
    result = client.run(train, rounds=1, min_seconds_left=1.0)
    assert result.rounds == (6,) and train.calls[-1][:2] == (5, 6)


def test_run_does_not_send_twice_in_a_round(clock: FakeClock) -> None:
    job = FakeJob(clock)
    client, _ = make_client(job)
    client.send_update(1, {"w": np.zeros(2)})  # by hand

    result = client.run(Trainer(clock), rounds=1, wait_for_last_model=False)

    assert result.rounds == (2,)


def test_rounds_longer_than_round_timeout_do_not_end_the_run(clock: FakeClock) -> None:
    job = FakeJob(clock, length=60.0)
    client, _ = make_client(job)

    result = client.run(Trainer(clock), rounds=2, round_timeout=10)

    # It waits for the next round until round_timeout after the open round's deadline.
    assert result.rounds == (1, 2) and not result.job_ended
    assert result.model is not None and result.model.round == 2


def test_run_stops_when_the_budget_is_spent(clock: FakeClock) -> None:
    job = FakeJob(clock, last_round=2)
    client, producer = make_client(job)

    result = client.run(Trainer(clock), rounds=5, round_timeout=10)

    assert result.rounds == (1, 2) and result.job_ended
    assert result.model is not None and result.model.round == 2
    assert len(producer.sent) == 2 and job.rejected == []
    # It waited round_timeout after round 2's deadline for round 3.
    assert clock.now == pytest.approx(job.deadline(2) + 10, abs=0.6)


def test_a_job_that_says_its_budget_is_spent_ends_run_at_once(clock: FakeClock) -> None:
    job = FakeJob(clock, last_round=2, says_spent=True)
    client, producer = make_client(job)

    result = client.run(Trainer(clock), rounds=5, round_timeout=10)

    assert result.rounds == (1, 2) and result.job_ended and result.budget_spent
    assert result.model is not None and result.model.round == 2
    # No round_timeout spent waiting for round 3: the record came with round 2's release.
    assert clock.now < job.deadline(2) + 1
    spent = client.budget_spent
    assert spent is not None and (spent.round, spent.base_model_round) == (3, 2)
    assert client.latest_round is not None and client.latest_round.round == 2


def test_a_run_that_sent_every_round_asked_has_not_ended_early_though_the_budget_is_spent(
    clock: FakeClock,
) -> None:
    job = FakeJob(clock, last_round=2, says_spent=True)
    client, _ = make_client(job)
    result = client.run(Trainer(clock), rounds=2, round_timeout=10)
    assert result.rounds == (1, 2) and not result.job_ended and result.budget_spent


def test_after_the_budget_spent_record_waits_for_rounds_and_models_that_never_come_raise(
    clock: FakeClock,
) -> None:
    job = FakeJob(clock, last_round=2, release_last=False, says_spent=True)
    client, _ = make_client(job)
    result = client.run(Trainer(clock), rounds=2, round_timeout=10)
    assert result.rounds == (1, 2) and result.budget_spent and result.job_ended  # 2 unreleased
    with pytest.raises(BudgetSpentError, match=r"rounds from 3 on never open and the final model "
                       r"is round 1 \(wait_for_model\(1\) reads it\)") as e:
        client.wait_for_round(timeout=30)
    assert (e.value.first_unopened, e.value.final_model_round) == (3, 1)
    with pytest.raises(BudgetSpentError, match="its model never comes"):
        client.wait_for_model(2, timeout=30)  # refused at its close
    assert client.wait_for_model(1, timeout=1).round == 1
    assert client.wait_for_round(2, timeout=1).round == 2  # announced before: still readable
    assert clock.now < job.deadline(2) + 1


def test_an_older_job_that_only_stops_names_the_latest_models_budget_in_the_timeout(
    clock: FakeClock,
) -> None:
    job = FakeJob(clock, last_round=2)
    client, _ = make_client(job)
    client.run(Trainer(clock), rounds=2, round_timeout=10)
    with pytest.raises(PrivaggTimeout, match=r"the latest model \(round 2\) states epsilon 1 of "
                       r"budget 10"):
        client.wait_for_round(timeout=5)


def test_before_the_specs_start_time_wait_for_round_waits_for_it(clock: FakeClock) -> None:
    job = FakeJob(clock, length=1000.0)
    starts = START + 120  # rounds.startAt: the job announces round 1 then, not at its start
    job.published[:] = [p for p in job.published if p.topic != JOB.topics.rounds]
    job._announce(1, starts)
    scheduled = JobConfig("j", {"w": [2]}, start_at_millis=round(starts * 1000))
    client, _ = make_client(job, job_config=scheduled)

    assert client.wait_for_round(timeout=5).round == 1
    assert clock.now == pytest.approx(starts, abs=0.6)


def test_without_a_round_limit_run_goes_on_until_the_job_ends(clock: FakeClock) -> None:
    job = FakeJob(clock, last_round=4, announce_delay=0.8)
    client, _ = make_client(job)

    result = client.run(Trainer(clock), round_timeout=10)

    assert result.rounds == (1, 2, 3, 4) and result.job_ended
    assert result.model is not None and result.model.round == 4
    np.testing.assert_array_equal(result.model.tensors["w"], [4, 4])


def test_when_the_budget_runs_out_at_the_last_rounds_release_run_reports_the_end(
    clock: FakeClock,
) -> None:
    job = FakeJob(clock, last_round=3, release_last=False)
    client, _ = make_client(job)

    result = client.run(Trainer(clock), rounds=3, round_timeout=10)

    assert result.rounds == (1, 2, 3) and result.job_ended
    assert result.model is not None and result.model.round == 2


def test_against_a_job_that_already_ended_run_sends_nothing(clock: FakeClock) -> None:
    job = FakeJob(clock, last_round=2)
    clock.now = START + 60
    client, producer = make_client(job)
    train = Trainer(clock)

    result = client.run(train, rounds=3, round_timeout=10)

    assert result == RunResult((), (), result.model, job_ended=True)
    assert result.model is not None and result.model.round == 2
    assert train.calls == [] and producer.sent == []
    assert clock.now == pytest.approx(START + 70, abs=0.6)


def test_an_update_that_missed_its_deadline_is_sent_and_reported_late(
    clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    job = FakeJob(clock)
    client, producer = make_client(job)
    train = Trainer(clock, seconds=[ROUND_SECONDS + 1])  # the first round's training overruns

    with caplog.at_level(logging.WARNING, logger="privagg_client.client"):
        result = client.run(train, rounds=2)

    assert result.rounds == (1, 2) and result.late_rounds == (1,)
    assert job.rejected == [(1, "STALE")] and sorted(job.accepted) == [2]
    # Round 2 opened while round 1 trained: it trained on the model of round 1, released empty.
    assert train.calls[1] == (1, 2, [0, 0])
    assert "round 1: the update of c for round 1 reached the broker 1.000 s after" in caplog.text


def test_run_judges_lateness_by_the_brokers_append_time_not_this_machines_clock(
    clock: FakeClock,
) -> None:
    # The client sends 0.5 s before round 1's deadline by its clock; the broker appends 1 s later.
    job = FakeJob(clock)
    client, _ = make_client(job, append_delay=1.0)
    train = Trainer(clock, seconds=[ROUND_SECONDS - 0.5])

    result = client.run(train, rounds=2)

    assert result.rounds == (1, 2) and result.late_rounds == (1,)
    assert job.rejected == [(1, "STALE")] and sorted(job.accepted) == [2]


def test_run_does_not_call_an_update_late_that_the_broker_appended_in_time(
    clock: FakeClock,
) -> None:
    # This machine's clock is 1 s ahead of the broker's: its deadline has passed, the broker's not.
    job = FakeJob(clock)
    client, _ = make_client(job, append_delay=-1.0)
    train = Trainer(clock, seconds=[ROUND_SECONDS + 0.5])

    result = client.run(train, rounds=1, wait_for_last_model=False)

    assert result.rounds == (1,) and result.late_rounds == ()
    assert sorted(job.accepted) == [1] and job.rejected == []


# -- send_update's receipt ------------------------------------------------------------------


def test_send_update_returns_the_brokers_receipt_with_the_deadline_it_checked(
    clock: FakeClock,
) -> None:
    job = FakeJob(clock)
    client, _ = make_client(job)
    announcement = client.wait_for_round()
    clock.sleep(2.0)

    receipt = client.send_update(announcement.round, {"w": np.zeros(2)})

    deadline = round(job.deadline(1) * 1000)
    assert receipt == UpdateReceipt(1, 0, 0, deadline - 3000, deadline)
    assert receipt.seconds_before_deadline == 3.0
    assert sorted(job.accepted) == [1]


def test_an_update_the_broker_appends_after_the_deadline_raises_saying_by_how_much(
    clock: FakeClock,
) -> None:
    """The issue's case: wait_for_round, train too long, send_update."""
    job = FakeJob(clock)
    client, _ = make_client(job)
    announcement = client.wait_for_round()
    clock.sleep(ROUND_SECONDS + 2.0)

    with pytest.raises(
        LateUpdateError,
        match=r"the update of c for round 1 reached the broker 2.000 s after the round's deadline "
        r"\(by the broker's clock, which the job decides by\): the job rejects it as stale. "
        "Train faster",
    ) as raised:
        client.send_update(announcement.round, {"w": np.zeros(2)})

    deadline = round(job.deadline(1) * 1000)
    assert raised.value.receipt == UpdateReceipt(1, 0, 0, deadline + 2000, deadline)
    assert job.rejected == [(1, "STALE")]
    # It was sent: the next open round is a later one.
    assert client.wait_for_round().round == 2


def test_an_update_appended_at_the_deadline_is_late(clock: FakeClock) -> None:
    # A round takes the updates appended in [open, deadline).
    job = FakeJob(clock)
    client, _ = make_client(job)
    client.wait_for_round()
    clock.now = job.deadline(1)

    with pytest.raises(LateUpdateError, match="0.000 s after the round's deadline"):
        client.send_update(1, {"w": np.zeros(2)})
    assert job.rejected == [(1, "STALE")]


def test_without_the_rounds_announcement_nothing_is_checked(clock: FakeClock) -> None:
    job = FakeJob(clock)
    client, _ = make_client(job)
    clock.sleep(ROUND_SECONDS + 2.0)  # round 1 closed, and this client never read it

    receipt = client.send_update(1, {"w": np.zeros(2)})

    assert receipt is not None and receipt.deadline_millis is None
    assert receipt.seconds_before_deadline is None


def test_a_timestamp_the_broker_did_not_stamp_is_not_taken_for_its_append_time(
    clock: FakeClock,
) -> None:
    # On a CreateTime topic the delivery report carries this client's own time.
    job = FakeJob(clock)
    client, _ = make_client(job, create_time=True)
    client.wait_for_round()
    clock.sleep(ROUND_SECONDS + 2.0)

    receipt = client.send_update(1, {"w": np.zeros(2)})

    assert receipt is not None and receipt.appended_millis is None


def test_once_a_broker_answered_all_brokers_down_is_an_outage_that_is_waited_out(
    clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    # A client that never reached a broker fails at once on the same report
    # (test_client_offline.py): here the broker answered before it restarted.
    job = FakeJob(clock)
    client, _ = make_client(job)
    client.poll(0.1)

    with caplog.at_level(logging.WARNING, logger="privagg_client.client"):
        client._on_error(KafkaError(KafkaError._ALL_BROKERS_DOWN, "1/1 brokers are down"))
        client.poll(0.1)
        result = client.run(Trainer(clock), rounds=2)

    assert result.rounds == (1, 2)
    assert "kafka: 1/1 brokers are down; waiting for them to come back" in caplog.text


def test_without_any_round_announced_run_raises_the_wait_for_rounds_timeout(
    clock: FakeClock,
) -> None:
    job = FakeJob(clock)
    client, producer = make_client(job, topics_exist=False)

    with pytest.raises(
        PrivaggTimeout,
        match="an open round of job j was not announced within 3 s; topics privagg.rounds and "
        "privagg.models were not found",
    ):
        client.run(Trainer(clock), rounds=1, round_timeout=3)
    assert producer.sent == []


def test_rounds_announced_with_too_little_time_left_raise_a_timeout_that_says_so(
    clock: FakeClock,
) -> None:
    job = FakeJob(clock, length=2.0, announce_delay=1.0)
    client, producer = make_client(job)
    client.poll(0.1)  # round 1 is known
    clock.now = START + 2.5  # round 1 closed, round 2 not announced yet

    with pytest.raises(PrivaggTimeout, match="announced rounds up to .* but none with more than 2.5 s left"):
        client.run(Trainer(clock), rounds=1, round_timeout=8, min_seconds_left=2.5)
    assert producer.sent == []


def test_a_base_model_that_does_not_arrive_raises_the_wait_for_models_timeout(
    clock: FakeClock,
) -> None:
    job = FakeJob(clock, publish_models=False)
    client, _ = make_client(job)

    with pytest.raises(PrivaggTimeout, match="the model of round 0 of job j did not arrive within 2 s"):
        client.run(Trainer(clock), rounds=1, model_timeout=2)


def test_a_refused_update_raises_send_error(clock: FakeClock) -> None:
    job = FakeJob(clock)
    client, _ = make_client(job, refuse=True)
    train = Trainer(clock)

    with pytest.raises(SendError, match="the update of c for round 1 was refused: too large"):
        client.run(train, rounds=3)
    assert len(train.calls) == 1


def test_an_unacknowledged_update_raises_send_error_after_send_timeout(clock: FakeClock) -> None:
    job = FakeJob(clock)
    client, _ = make_client(job, unacknowledged=True)

    with pytest.raises(SendError, match="for round 1 was not acknowledged within 0.5 s"):
        client.run(Trainer(clock), rounds=1, send_timeout=0.5)


def test_an_update_of_the_wrong_shape_raises_before_anything_is_sent(clock: FakeClock) -> None:
    job = FakeJob(clock)
    client, producer = make_client(job)

    def train(base: GlobalModel, round_number: int) -> Mapping[str, Any]:
        return {"w": np.zeros(3)}

    with pytest.raises(TensorShapeError, match=r"tensor 'w' has shape \[3\]"):
        client.run(train, rounds=1)
    assert producer.pending == [] and producer.sent == []


def test_what_train_fn_raises_propagates(clock: FakeClock) -> None:
    job = FakeJob(clock)
    client, producer = make_client(job)

    def train(base: GlobalModel, round_number: int) -> Mapping[str, Any]:
        raise RuntimeError("out of memory")

    with pytest.raises(RuntimeError, match="out of memory"):
        client.run(train, rounds=1)
    assert producer.sent == []


def test_without_waiting_for_the_last_model_run_returns_at_the_last_acknowledgement(
    clock: FakeClock,
) -> None:
    job = FakeJob(clock)
    client, _ = make_client(job)

    result = client.run(Trainer(clock), rounds=2, wait_for_last_model=False)

    assert result.rounds == (1, 2)
    assert result.model is not None and result.model.round == 1
    assert clock.now < job.deadline(2)


def test_a_last_round_that_is_not_released_ends_the_wait_when_the_next_round_opens(
    clock: FakeClock,
) -> None:
    job = FakeJob(clock, unreleased=frozenset({2}))
    client, _ = make_client(job)

    result = client.run(Trainer(clock), rounds=2, round_timeout=30)

    assert result.rounds == (1, 2) and not result.job_ended
    assert result.model is not None and result.model.round == 1
    assert clock.now == pytest.approx(job.deadline(2))


@pytest.mark.parametrize(
    "arguments, message",
    [
        ({"rounds": 0}, "rounds must be a positive integer or None, was 0"),
        ({"rounds": True}, "rounds must be a positive integer or None, was True"),
        ({"rounds": 1.5}, "rounds must be a positive integer or None, was 1.5"),
        ({"round_timeout": 0}, "round_timeout must be positive, was 0"),
        ({"model_timeout": -1}, "model_timeout must be positive, was -1"),
        ({"send_timeout": float("nan")}, "send_timeout must be positive, was nan"),
        ({"min_seconds_left": -0.5}, "min_seconds_left must be >= 0, was -0.5"),
    ],
)
def test_run_refuses_invalid_arguments_before_doing_anything(
    clock: FakeClock, arguments: dict[str, Any], message: str
) -> None:
    job = FakeJob(clock)
    client, producer = make_client(job)
    with pytest.raises(ValueError, match=message):
        client.run(Trainer(clock), **arguments)
    assert producer.sent == [] and clock.now == START
