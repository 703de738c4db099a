"""A client of one privagg training job over Kafka (confluent-kafka / librdkafka)."""

from __future__ import annotations

import logging
import os
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np
from confluent_kafka import OFFSET_BEGINNING, TIMESTAMP_LOG_APPEND_TIME, Consumer, KafkaError
from confluent_kafka import KafkaException, Producer, TopicPartition

from .errors import (
    BudgetSpentError,
    JobConfigError,
    KafkaClientError,
    LateUpdateError,
    ModelUnavailableError,
    PrivaggTimeout,
    SendError,
    WireFormatError,
)
from .job import JobConfig
from .records import GlobalModel, RoundAnnouncement
from .secure_round import PHASES, SecureRoundResult, send_secure_update
from .statistics import encode_rows
from .updates import check_sender, check_update, encode_update

log = logging.getLogger(__name__)

_LIBRDKAFKA_MAX_MESSAGE_BYTES = 1_000_000_000
_DEFAULT_RECEIVE_BYTES = 100_000_000
_SECRET_HINTS = ("password", "secret", "token", "key", "jaas", "credentials", "oauthbearer.config")
# librdkafka errors after which nothing will work without a change of configuration.
_FATAL_CODES = {
    KafkaError._AUTHENTICATION,
    KafkaError._SSL,
    KafkaError.SASL_AUTHENTICATION_FAILED,
    KafkaError.TOPIC_AUTHORIZATION_FAILED,
    KafkaError.CLUSTER_AUTHORIZATION_FAILED,
    KafkaError.GROUP_AUTHORIZATION_FAILED,
}
# How long a flush waits between looks at what the error callback reported.
_FLUSH_SLICE_SECONDS = 0.2


TrainFn = Callable[[GlobalModel, int], Mapping[str, Any]]
"""What :meth:`PrivaggClient.run` calls once a round: ``train_fn(base_model, round_number)``
returns the update for round ``round_number``, the delta from ``base_model`` (the announced base
model) as :meth:`PrivaggClient.send_update` takes it: a mapping of every tensor name of the model
to a NumPy array, anything array-like, or a PyTorch tensor."""


@dataclass(frozen=True)
class RunResult:
    """What :meth:`PrivaggClient.run` did.

    ``rounds``: the rounds it sent an update for, in order (the broker acknowledged each).
    ``late_rounds``: those of ``rounds`` whose update the broker appended at or after the round's
    deadline (training took longer than the round had left): the job rejected them as stale.
    ``model``: the newest model read when it returned (with ``wait_for_last_model``, the model
    of the last round it sent to, unless that round was not released), or None.
    ``job_ended``: True when it stopped because the job opened no more rounds: the job said its
    privacy budget is spent (``budget_spent``), or no round was announced within
    ``round_timeout`` seconds after the newest one closed (the job was stopped, or its budget ran
    out before it could say so).
    ``budget_spent``: the job said publicly that its budget is spent; ``model`` is then its final
    model once read.
    """

    rounds: tuple[int, ...]
    late_rounds: tuple[int, ...]
    model: GlobalModel | None
    job_ended: bool
    budget_spent: bool = False


@dataclass(frozen=True)
class UpdateReceipt:
    """The broker's acknowledgement of an update :meth:`PrivaggClient.send_update` sent.

    ``partition`` and ``offset``: where the updates topic holds it. ``appended_millis``: the
    broker's append time in epoch milliseconds (``LogAppendTime``, by which the job decides
    which round an update belongs to), or None when the broker did not stamp it (an updates
    topic not set to ``LogAppendTime``, which the job refuses). ``deadline_millis``: the
    deadline of the round's announcement this client had read, which the append time was checked
    against, or None when it had read none (then nothing was checked).

    A receipt says the update arrived before the deadline the client knew, not that the job
    took it: a round with ``rounds.closeEarly`` closes once enough updates arrived, before its
    announced deadline and unseen by clients, and the job also rejects duplicates, updates after
    its budget is spent and unsampled ones, on its operator-only rejects topic.
    """

    round_number: int
    partition: int
    offset: int
    appended_millis: int | None
    deadline_millis: int | None

    @property
    def seconds_before_deadline(self) -> float | None:
        """How long before the known deadline the broker appended the update (zero or negative:
        at or after it, so late), or None when either time is unknown."""
        if self.appended_millis is None or self.deadline_millis is None:
            return None
        return (self.deadline_millis - self.appended_millis) / 1000


def is_secret_key(key: str) -> bool:
    """True for Kafka properties whose values must never be shown (passwords, keys, tokens)."""
    k = key.lower()
    return any(hint in k for hint in _SECRET_HINTS) and not k.endswith(".location")


def redact(text: str, config: Mapping[str, Any]) -> str:
    """``text`` with the values of every secret property of ``config`` replaced by ``***``."""
    for key, value in config.items():
        if is_secret_key(str(key)) and value:
            text = text.replace(str(value), "***")
    return text


class PrivaggClient:
    """Follows one training job's rounds and models and sends this client's updates.

    It reads the public rounds and models topics from their beginning with
    ``isolation.level=read_committed`` (the job's releases are transactional) and keeps only
    records keyed by its job id. Updates are keyed by the client id, as the Java client does.

    ``kafka_config`` holds extra librdkafka properties (``security.protocol``, ``sasl.*``,
    ``ssl.*``, ...) for every producer and consumer it creates; secret values are never shown.

    Until some broker answered it, the client fails when librdkafka has found every broker of
    ``bootstrap_servers`` down (an address that does not resolve, a port nobody listens on, a
    listener of another protocol) for ``connect_timeout`` seconds (default 10, for a broker that
    is still starting): a :class:`KafkaClientError` naming the servers, instead of each call's
    full timeout. Once a broker answered, an outage (a broker restart) is waited
    out, as librdkafka reconnects, up to each call's timeout. Broker failures are logged once,
    by librdkafka (on stderr, or through the ``logger`` given in ``kafka_config``).

    ``masked_rounds``, in secure mode: a file that remembers across restarts the session each
    round's update was masked in, so that a restarted client never masks a round's update in a
    second session the job opened after a restore (without it the guard is per call only).

    Use as a context manager, or call :meth:`close`::

        with PrivaggClient.from_spec("jobs/digits-softmax.yaml", "localhost:9092", "alice") as c:
            announcement = c.wait_for_round()
            base = c.wait_for_model(announcement.base_model_round)
            c.send_update(announcement.round, train(base.tensors))
    """

    def __init__(
        self,
        job: JobConfig,
        bootstrap_servers: str,
        client_id: str,
        kafka_config: Mapping[str, Any] | None = None,
        keep_models: int = 3,
        masked_rounds: str | os.PathLike[str] | None = None,
        connect_timeout: float = 10.0,
    ) -> None:
        if not bootstrap_servers:
            raise KafkaClientError("bootstrap_servers is empty; give host:port[,host:port]")
        if keep_models < 1:
            raise ValueError(f"keep_models must be >= 1, was {keep_models}")
        if not connect_timeout >= 0:
            raise ValueError(f"connect_timeout must be >= 0 seconds, was {connect_timeout!r}")
        self._connect_timeout = connect_timeout
        self.job = job
        self.client_id = client_id
        self.bootstrap_servers = bootstrap_servers
        self._extra: dict[str, Any] = dict(kafka_config or {})
        self._keep_models = keep_models
        self._masked_rounds = masked_rounds
        self._rounds: dict[int, RoundAnnouncement] = {}
        self._budget_spent: RoundAnnouncement | None = None
        self._models: dict[int, GlobalModel] = {}
        self._latest_model_round = -1
        self._last_sent_round = 0
        self._fatal: str | None = None
        self._reached = False
        self._unreachable: str | None = None
        self._unreachable_since = 0.0
        self._broker_error: str | None = None
        self._producer: Producer | None = None
        self._consumer: Consumer | None = None
        self._assigned = False
        self._secure_consumer: Consumer | None = None
        self._secure_assigned = False

    @classmethod
    def from_spec(
        cls,
        spec: str | Path,
        bootstrap_servers: str,
        client_id: str,
        kafka_config: Mapping[str, Any] | None = None,
        masked_rounds: str | os.PathLike[str] | None = None,
        noise_multiplier: float | None = None,
        connect_timeout: float = 10.0,
    ) -> PrivaggClient:
        """A client of the job the spec YAML at ``spec`` describes. ``noise_multiplier``: with
        distributed noise and a spec planned from ``targetEpsilon``, the multiplier the job
        planned, which the round's announced noise shares are checked against."""
        return cls(
            JobConfig.from_spec(spec, noise_multiplier=noise_multiplier),
            bootstrap_servers,
            client_id,
            kafka_config,
            masked_rounds=masked_rounds,
            connect_timeout=connect_timeout,
        )

    def __repr__(self) -> str:
        keys = sorted(self._extra)
        return (
            f"PrivaggClient(job={self.job.job_id!r}, client_id={self.client_id!r}, "
            f"bootstrap_servers={self.bootstrap_servers!r}, kafka_config_keys={keys})"
        )

    # -- Kafka clients -----------------------------------------------------------------------

    def _on_error(self, error: KafkaError) -> None:
        """librdkafka's error callback (called while a client polls or flushes)."""
        message = self._note(error)
        if error.code() == KafkaError._ALL_BROKERS_DOWN and self._reached:
            log.warning("kafka: %s; waiting for them to come back", message)
        else:
            # librdkafka has logged each broker failure itself (its FAIL lines); logging it here
            # again showed every line twice. Failures for good are raised with their text.
            log.debug("kafka: %s", message)

    def _on_record_error(self, error: KafkaError) -> None:
        """An error a consumer returned in place of a record."""
        log.warning("kafka: %s", self._note(error))

    def _note(self, error: KafkaError) -> str:
        """Remembers what ``error`` means for this client (Kafka failed for good, or no broker
        was ever reached) and returns its text, secrets redacted."""
        message = redact(error.str(), self._extra)
        if error.fatal() or error.code() in _FATAL_CODES:
            self._fatal = message
        elif error.code() != KafkaError._ALL_BROKERS_DOWN:
            self._broker_error = message
        elif not self._reached:
            # Nothing ever answered: a wrong address, or a broker still starting, which
            # connect_timeout waits for.
            if self._unreachable is None:
                self._unreachable_since = time.time()
            self._unreachable = self._broker_error or message
        return message

    def _make(self, kind: type, config: dict[str, Any]) -> Any:
        config.update(self._extra)
        config["error_cb"] = self._on_error
        try:
            return kind(config)
        except (KafkaException, ValueError, TypeError) as e:
            raise KafkaClientError(
                f"Kafka refused the {kind.__name__.lower()} configuration: "
                f"{redact(str(e), self._extra)}"
            ) from None

    def _model_record_bytes(self) -> int:
        names = sum(len(t.name.encode()) + 5 * len(t.shape) + 16 for t in self.job.tensors)
        return (1 << 20) + 4 * self.job.parameters + names

    def _producer_(self) -> Producer:
        if self._producer is None:
            self._producer = self._make(
                Producer,
                {
                    "bootstrap.servers": self.bootstrap_servers,
                    "client.id": f"privagg-python-{self.client_id}",
                    "linger.ms": 5,
                    "message.max.bytes": min(
                        _LIBRDKAFKA_MAX_MESSAGE_BYTES,
                        max(1_000_000, self.job.max_record_bytes + 4096),
                    ),
                },
            )
        return self._producer

    def _new_consumer(self) -> Consumer:
        record = self._model_record_bytes()
        receive = max(_DEFAULT_RECEIVE_BYTES, record + (1 << 20))
        return self._make(
            Consumer,
            {
                "bootstrap.servers": self.bootstrap_servers,
                "group.id": f"privagg-client-{uuid.uuid4()}",
                "client.id": f"privagg-python-{self.client_id}",
                "enable.auto.commit": False,
                "isolation.level": "read_committed",
                "max.partition.fetch.bytes": record,
                "fetch.max.bytes": receive - 1024,
                "receive.message.max.bytes": receive,
            },
        )

    def _consumer_(self) -> Consumer:
        if self._consumer is None:
            self._consumer = self._new_consumer()
        return self._consumer

    def _check_fatal(self) -> None:
        if self._fatal is not None:
            raise KafkaClientError(f"Kafka failed for good: {self._fatal}")
        if (
            self._unreachable is not None
            and time.time() - self._unreachable_since >= self._connect_timeout
        ):
            raise KafkaClientError(
                f"no Kafka broker at {self.bootstrap_servers} could be reached "
                f"({self._unreachable}); check bootstrap_servers (host:port of a listener this "
                "machine can reach, the broker started) and kafka_config's security settings"
            )

    def _try_assign(self, timeout: float) -> bool:
        """Reads both public topics from the start of every partition (no consumer group: a
        client reads everything, and joining a group would only add a rebalance wait). False
        while the topics' metadata cannot be read within ``timeout``."""
        topics = [self.job.topics.rounds, self.job.topics.models]
        self._assigned = self._assign_from_start(self._consumer_(), topics, timeout)
        return self._assigned

    def _assign_from_start(self, consumer: Consumer, topics: list[str], timeout: float) -> bool:
        """Assigns every partition of ``topics`` from its start; False while their metadata
        cannot be read within ``timeout``."""
        try:
            metadata = consumer.list_topics(timeout=max(0.1, timeout))
        except KafkaException as e:
            log.debug("metadata: %s", redact(str(e), self._extra))
            consumer.poll(0)  # serves the error callback, which list_topics does not
            return False
        self._reached = True
        self._unreachable = None
        found = metadata.topics
        if not all(t in found and found[t].error is None and found[t].partitions for t in topics):
            return False
        consumer.assign(
            [TopicPartition(t, p, OFFSET_BEGINNING) for t in topics for p in sorted(found[t].partitions)]
        )
        return True

    def _not_found(self) -> str:
        if self._assigned:
            return ""
        return (
            f"; topics {self.job.topics.rounds} and {self.job.topics.models} were not found at "
            f"{self.bootstrap_servers} (is the job running, and the broker reachable with this "
            "configuration?)"
        )

    def poll(self, timeout: float = 0.1) -> None:
        """Reads what has arrived on the rounds and models topics, waiting at most ``timeout``."""
        if not self._assigned:
            start = time.time()
            if not self._try_assign(timeout):
                self._check_fatal()
                time.sleep(max(0.0, min(0.2, start + timeout - time.time())))
                return
            timeout = max(0.0, start + timeout - time.time())
        self._check_fatal()
        for msg in self._consumer_().consume(num_messages=64, timeout=timeout):
            error = msg.error()
            if error is not None:
                if error.code() != KafkaError._PARTITION_EOF:
                    self._on_record_error(error)
                continue
            key = msg.key()
            if key is None or key.decode("utf-8", "replace") != self.job.job_id:
                continue  # other jobs share the topics
            try:
                if msg.topic() == self.job.topics.rounds:
                    a = RoundAnnouncement.decode(msg.value())
                    if a.budget_spent:
                        self._budget_spent = a
                    else:
                        self._rounds[a.round] = a
                else:
                    self._remember(GlobalModel.decode(msg.value()))
            except WireFormatError as e:
                raise WireFormatError(
                    f"{msg.topic()} partition {msg.partition()} offset {msg.offset()}: {e}"
                ) from e
        self._check_fatal()

    def _remember(self, model: GlobalModel) -> None:
        self._models[model.round] = model
        self._latest_model_round = max(self._latest_model_round, model.round)
        for old in [r for r in self._models if r <= self._latest_model_round - self._keep_models]:
            del self._models[old]

    # -- rounds and models -------------------------------------------------------------------

    def wait_for_round(
        self,
        round_number: int | None = None,
        timeout: float = 60.0,
        min_seconds_left: float = 0.0,
    ) -> RoundAnnouncement:
        """Waits for a round announcement and returns it.

        With ``round_number``, waits for that round's announcement (even if its deadline passed).
        Without, waits for an open round this client has not sent an update for: the newest
        announced round after the last one :meth:`send_update` sent to, whose deadline is more
        than ``min_seconds_left`` seconds away by this machine's clock.
        """
        deadline = time.time() + timeout
        starts = self.job.start_at_millis
        if starts is not None and not self._rounds and starts / 1000 > time.time():
            # Deployed before its clients: round 1 opens at the spec's rounds.startAt.
            log.info(
                "job %s: round 1 opens at %s (rounds.startAt); waiting for it",
                self.job.job_id,
                datetime.fromtimestamp(starts / 1000, tz=timezone.utc).isoformat(),
            )
            deadline = max(deadline, starts / 1000 + timeout)
        waited = deadline - time.time()
        while True:
            if round_number is not None and round_number in self._rounds:
                return self._rounds[round_number]
            self._raise_if_budget_spent(round_number, "round")
            if round_number is None:
                open_rounds = [
                    a
                    for r, a in self._rounds.items()
                    if r > self._last_sent_round and a.seconds_left() > min_seconds_left
                ]
                if open_rounds:
                    return max(open_rounds, key=lambda a: a.round)
            remaining = deadline - time.time()
            if remaining <= 0:
                what = f"round {round_number}" if round_number is not None else "an open round"
                raise PrivaggTimeout(
                    f"{what} of job {self.job.job_id} was not announced within {waited:g} s"
                    + self._not_found()
                    + self._latest_statement()
                )
            self.poll(min(0.5, remaining))

    def wait_for_model(self, round_number: int, timeout: float = 60.0) -> GlobalModel:
        """Waits for the model released after round ``round_number`` (0: the initial model).

        Raises :class:`ModelUnavailableError` when a later model arrived first: that round was
        not released (a minimum cohort not met), compacted away, or no longer kept here.
        """
        deadline = time.time() + timeout
        while round_number not in self._models:
            self._raise_if_budget_spent(round_number, "model")
            if self._latest_model_round > round_number:
                raise ModelUnavailableError(
                    f"the model of round {round_number} of job {self.job.job_id} is not available: "
                    f"the model of round {self._latest_model_round} was already read (the round "
                    f"was not released, or compacted away, or is older than the "
                    f"{self._keep_models} latest this client keeps)"
                )
            remaining = deadline - time.time()
            if remaining <= 0:
                raise PrivaggTimeout(
                    f"the model of round {round_number} of job {self.job.job_id} did not arrive "
                    f"within {timeout:g} s (latest read: "
                    f"{self._latest_model_round if self._latest_model_round >= 0 else 'none'})"
                    + self._not_found()
                )
            self.poll(min(0.5, remaining))
        return self._models[round_number]

    @property
    def budget_spent(self) -> RoundAnnouncement | None:
        """The job's public budget-spent record once read (:attr:`RoundAnnouncement.budget_spent`):
        no round from its ``round`` on opens; its ``base_model_round`` is the final model."""
        return self._budget_spent

    def _raise_if_budget_spent(self, round_number: int | None, what: str) -> None:
        """Raises :class:`BudgetSpentError` when the job said that round ``round_number`` (None:
        any next round) never opens, or (``what`` "model") that its model never comes."""
        spent = self._budget_spent
        if spent is None:
            return
        # Rounds from spent.round on never open; no model after the final one is released.
        first_missing = spent.base_model_round + 1 if what == "model" else spent.round
        if round_number is not None and round_number < first_missing:
            return
        asked = f"round {round_number}" if round_number is not None else "another round"
        raise BudgetSpentError(
            f"job {self.job.job_id}: the privacy budget is spent, so {asked} never opens"
            + (f" and its {what} never comes" if what == "model" else "")
            + f"; rounds from {spent.round} on never open and the final model is round "
            f"{spent.base_model_round} (wait_for_model({spent.base_model_round}) reads it)",
            spent.round,
            spent.base_model_round,
        )

    def _latest_statement(self) -> str:
        """What the latest model read says of the budget, for a timeout's message: a job whose
        budget ran out before it said so publicly (an older privagg) shows it there."""
        model = self.latest_model
        if model is None or model.round == 0:
            return ""
        p = model.privacy
        return (
            f"; the latest model (round {model.round}) states epsilon {p.epsilon:g} of budget "
            f"{p.budget_epsilon:g}: if that is near the budget, it is most likely spent"
        )

    @property
    def latest_round(self) -> RoundAnnouncement | None:
        """The newest announcement read so far (call :meth:`poll` to read more)."""
        return self._rounds[max(self._rounds)] if self._rounds else None

    def model(self, round_number: int) -> GlobalModel | None:
        """The model of round ``round_number`` if it was read and is still kept, else None."""
        return self._models.get(round_number)

    @property
    def latest_model(self) -> GlobalModel | None:
        """The newest model read so far (call :meth:`poll` to read more)."""
        return self._models.get(self._latest_model_round)

    # -- updates -----------------------------------------------------------------------------

    def send_update(
        self,
        round_number: int,
        update: Mapping[str, Any],
        metadata: Mapping[str, str] | None = None,
        timeout: float = 30.0,
    ) -> UpdateReceipt | None:
        """Sends this client's update for round ``round_number``; returns the broker's
        acknowledgement (:class:`UpdateReceipt`).

        ``update`` maps every tensor name of the model to its delta from the announced base
        model: NumPy arrays, anything array-like, or PyTorch tensors (a ``state_dict`` delta).
        Wrong names or shapes and non-finite values raise before anything is sent.

        Raises :class:`LateUpdateError` when the broker appended the update at or after the
        deadline of the round's announcement this client read (the job rejects it as stale; the
        error's ``receipt`` says by how much); :class:`SendError` when the broker refuses it or
        does not acknowledge it within ``timeout`` seconds.

        For a job in secure mode (the spec's ``aggregation.mode: secure``) it takes part in the
        round's secure aggregation instead (docs/secure-aggregation.md), returns None once the
        round's last phase is done, and raises :class:`SecureRoundError` if a message missed its
        phase's deadline or the job did not count this client's masked input: see
        :meth:`send_secure_update`, to which it passes ``timeout``, for the round's result.
        Secure mode sends no metadata.
        """
        if self.job.aggregation.secure:
            if metadata is not None:
                raise JobConfigError(
                    f"job {self.job.job_id} aggregates securely, which sends no metadata; "
                    "pass metadata=None"
                )
            self.send_secure_update(round_number, update, timeout=timeout)
            return None
        value = encode_update(self.job, round_number, self.client_id, update, metadata)
        what = f"the update of {self.client_id} for round {round_number}"
        receipt = self._receipt(round_number, self._produce(value, what, timeout))
        self._last_sent_round = max(self._last_sent_round, round_number)
        left = receipt.seconds_before_deadline
        if left is not None and left <= 0:
            raise LateUpdateError(
                f"{what} reached the broker {-left:.3f} s after the round's deadline (by the "
                "broker's clock, which the job decides by): the job rejects it as stale. Train "
                "faster, or skip rounds with too little time left (min_seconds_left of "
                "wait_for_round and run)",
                receipt,
            )
        return receipt

    def _receipt(self, round_number: int, delivered: Any) -> UpdateReceipt:
        """The receipt of the update for ``round_number`` whose delivery report is ``delivered``,
        with the deadline of the round's announcement if this client read it."""
        kind, millis = delivered.timestamp()
        announcement = self._rounds.get(round_number)
        return UpdateReceipt(
            round_number,
            delivered.partition(),
            delivered.offset(),
            millis if kind == TIMESTAMP_LOG_APPEND_TIME else None,
            announcement.deadline_millis if announcement is not None else None,
        )

    def send_statistics(
        self, round_number: int, rows: Any, timeout: float = 30.0
    ) -> UpdateReceipt | None:
        """A statistics job only: sends this client's rows for round ``round_number`` and returns
        what :meth:`send_update` returns (and raises what it raises).

        ``rows`` is a (rows, features) array in the spec's feature order, a mapping of feature
        names to columns, or a pandas DataFrame with those columns. At most the spec's
        ``statistics.maxRows`` rows are used (the first ones); values are clipped into their
        bounds (:func:`privagg_client.statistics.encode_rows`) and the job clips again. Raises
        :class:`JobConfigError` for a model-training job, :class:`TensorShapeError` for missing
        or unknown features and :class:`NonFiniteValuesError` for a NaN, before anything is sent.
        """
        if self.job.statistics is None:
            raise JobConfigError(
                f"job {self.job.job_id} trains a model (its spec has no statistics section): "
                "call send_update"
            )
        return self.send_update(
            round_number, encode_rows(self.job.statistics, rows), timeout=timeout
        )

    def send_secure_update(
        self,
        round_number: int,
        update: Mapping[str, Any],
        timeout: float = 30.0,
        *,
        phases: int = PHASES,
    ) -> SecureRoundResult:
        """Takes part in round ``round_number``'s secure aggregation with ``update`` and returns
        what it did, once its last message (phase 6) was acknowledged.

        It reads the job's secure topic (``topics.secure``, ``read_committed``) from the round's
        newest ``Opened`` record, waiting up to ``timeout`` seconds for it, then advertises its
        keys, shares them with its neighbours (with Feldman commitments to its sharing
        polynomials), says whose shares did not open or were off their dealer's commitments (its
        receipt), masks with the partners the job confirmed, sends its masked update, signs the
        survivor list the job announces (phase 5, the consistency round) and, once enough
        survivors signed the same list, reveals the shares the job needs (phase 6), each before
        its phase's deadline, waiting for each of the job's messages until ``timeout`` seconds
        after the deadline it follows. Training must end before the round's advertise deadline:
        the first message goes out when this is called.

        Raises :class:`SecureRoundError` naming the phase that failed and why (a deadline
        passed, a job message did not arrive, or this client refused to sign the survivor list
        or to unmask, as the protocol requires); :class:`TensorShapeError` and
        :class:`NonFiniteValuesError` before anything is sent; :class:`SendError` when the
        broker does not acknowledge a message.

        ``phases`` below 6 simulates a client that drops out: it returns once its message of
        phase ``phases`` (1 advertise, 2 share, 3 receipt, 4 masked input, 5 consistency) was
        acknowledged and sends nothing more for the round, as the Java client's
        ``sendSecure(round, clientId, tensors, phases)`` does. For tests and simulations of the
        job's dropout tolerance.
        """
        check_sender(self.job, round_number, self.client_id)
        values = np.concatenate([v.ravel() for _, v in check_update(self.job, update)])
        transport = _KafkaSecureTransport(self, timeout)
        result = send_secure_update(
            transport,
            self.job,
            self.client_id,
            round_number,
            values,
            open_timeout=timeout,
            grace=timeout,
            phases=phases,
            masked_rounds=self._masked_rounds,
        )
        self._last_sent_round = max(self._last_sent_round, round_number)
        if phases < PHASES:
            return result
        log.info(
            "job %s round %d: secure aggregation done as client %d of %d survivors",
            self.job.job_id,
            round_number,
            result.index,
            result.survivors,
        )
        return result

    def _produce(self, value: bytes, what: str, timeout: float) -> Any:
        """Writes ``value`` to the updates topic, keyed by the client id; returns the delivery
        report (a confluent-kafka ``Message``: partition, offset, timestamp) once the broker
        acknowledged it."""
        producer = self._producer_()
        outcome: list[tuple[KafkaError | None, Any]] = []
        producer.produce(
            self.job.topics.updates,
            value=value,
            key=self.client_id.encode("utf-8"),
            on_delivery=lambda err, msg: outcome.append((err, msg)),
        )
        end = time.time() + timeout
        while not outcome and time.time() < end:
            producer.flush(min(_FLUSH_SLICE_SECONDS, max(0.0, end - time.time())))
            if not outcome:
                self._check_fatal()
        if not outcome:
            raise SendError(f"{what} was not acknowledged within {timeout:g} s")
        error, delivered = outcome[0]
        if error is not None:
            raise SendError(f"{what} was refused: {redact(error.str(), self._extra)}")
        self._reached = True
        self._unreachable = None
        return delivered

    def _secure_consumer_(self, timeout: float) -> Consumer | None:
        """The consumer of the secure topic from its start; None while its metadata cannot be
        read."""
        if self._secure_consumer is None:
            self._secure_consumer = self._new_consumer()
        if not self._secure_assigned:
            topics = [self.job.topics.secure]
            self._secure_assigned = self._assign_from_start(self._secure_consumer, topics, timeout)
            if not self._secure_assigned:
                return None
        return self._secure_consumer

    def _read_secure(self, timeout: float) -> list[bytes]:
        """The secure topic's next committed records, waiting at most ``timeout`` seconds."""
        start = time.time()
        consumer = self._secure_consumer_(timeout)
        self._check_fatal()
        if consumer is None:
            time.sleep(max(0.0, min(0.2, start + timeout - time.time())))
            return []
        values = []
        remaining = max(0.0, start + timeout - time.time())
        for msg in consumer.consume(num_messages=64, timeout=remaining):
            error = msg.error()
            if error is not None:
                if error.code() != KafkaError._PARTITION_EOF:
                    self._on_record_error(error)
                continue
            values.append(msg.value())
        self._check_fatal()
        return values

    # -- the training loop -------------------------------------------------------------------

    def run(
        self,
        train_fn: TrainFn,
        rounds: int | None = None,
        *,
        round_timeout: float = 120.0,
        model_timeout: float = 60.0,
        send_timeout: float = 30.0,
        min_seconds_left: float = 1.0,
        wait_for_last_model: bool = True,
        on_sent: Callable[[int], None] | None = None,
    ) -> RunResult:
        """Takes part in ``rounds`` rounds (None: until the job ends) and returns what it did.

        Each round it does what a hand-written loop of the explicit calls does::

            announcement = client.wait_for_round(min_seconds_left=min_seconds_left)
            base = client.wait_for_model(announcement.base_model_round, timeout=model_timeout)
            update = train_fn(base, announcement.round)
            client.send_update(announcement.round, update, timeout=send_timeout)

        The round is the newest open round after the last one this client sent to, with more
        than ``min_seconds_left`` seconds left by this machine's clock; rounds that close first
        are skipped. An update whose round closed while ``train_fn`` ran is still sent; when
        the broker appended it at or after the deadline (:class:`LateUpdateError`), the job
        rejects it as stale: a warning is logged, the round is listed in
        :attr:`RunResult.late_rounds`, and the loop goes on with the next round.
        ``on_sent(round_number)`` is called after each update the broker acknowledged.

        It stops after ``rounds`` updates, then (``wait_for_last_model``) waits for the model
        of the last round it sent to, until ``round_timeout`` seconds after that round's
        deadline. It also stops, returning with :attr:`RunResult.job_ended`, when no round is
        announced within ``round_timeout`` seconds after the newest one closed: the job's budget
        is spent (or the job was stopped). Client code that needs a fixed number of rounds
        checks ``len(result.rounds)``.

        Raises what the explicit calls raise, and does not retry: :class:`PrivaggTimeout` when
        no round at all is announced within ``round_timeout`` (the job is not running, or the
        topics are not reachable) or rounds are announced but none with ``min_seconds_left``
        left, or a base model does not arrive within ``model_timeout``;
        :class:`ModelUnavailableError` for a base model no longer kept; :class:`SendError` when
        the broker does not acknowledge an update; :class:`TensorShapeError`,
        :class:`NonFiniteValuesError` or :class:`RecordTooLargeError` for an update the job
        would reject (before anything is sent); :class:`KafkaClientError` when Kafka fails for
        good, or at once when no broker can be reached and none ever answered; and whatever
        ``train_fn`` raises.
        """
        if rounds is not None and (
            not isinstance(rounds, int) or isinstance(rounds, bool) or rounds < 1
        ):
            raise ValueError(f"rounds must be a positive integer or None, was {rounds!r}")
        for name, value in (
            ("round_timeout", round_timeout),
            ("model_timeout", model_timeout),
            ("send_timeout", send_timeout),
        ):
            if not value > 0:
                raise ValueError(f"{name} must be positive, was {value!r}")
        if not min_seconds_left >= 0:
            raise ValueError(f"min_seconds_left must be >= 0, was {min_seconds_left!r}")
        sent: list[int] = []
        late: list[int] = []
        last: RoundAnnouncement | None = None
        job_ended = False
        while rounds is None or len(sent) < rounds:
            announcement = self._next_round(round_timeout, min_seconds_left)
            if announcement is None:
                job_ended = True
                break
            base = self.wait_for_model(announcement.base_model_round, timeout=model_timeout)
            update = train_fn(base, announcement.round)
            try:
                receipt = self.send_update(announcement.round, update, timeout=send_timeout)
            except LateUpdateError as e:
                late.append(announcement.round)
                log.warning("job %s round %d: %s", self.job.job_id, announcement.round, e)
            else:
                left = receipt.seconds_before_deadline if receipt is not None else None
                log.info(
                    "job %s round %d: update sent%s",
                    self.job.job_id,
                    announcement.round,
                    "" if left is None else f", {left:.1f} s before the deadline",
                )
            sent.append(announcement.round)
            last = announcement
            if on_sent is not None:
                on_sent(announcement.round)
        if wait_for_last_model and last is not None and not job_ended:
            job_ended = not self._wait_for_release(last, round_timeout)
        spent = self._budget_spent
        if spent is not None and (rounds is None or len(sent) < rounds):
            job_ended = True
            log.info(
                "job %s: its privacy budget is spent; rounds from %d on never open and the final "
                "model is round %d; %d updates sent",
                self.job.job_id,
                spent.round,
                spent.base_model_round,
                len(sent),
            )
        elif job_ended:
            newest = self.latest_round
            log.info(
                "job %s announced no round within %g s after round %s closed: its budget is "
                "spent, or it was stopped; %d updates sent",
                self.job.job_id,
                round_timeout,
                newest.round if newest is not None else "?",
                len(sent),
            )
        return RunResult(tuple(sent), tuple(late), self.latest_model, job_ended, spent is not None)

    def _next_round(
        self, round_timeout: float, min_seconds_left: float
    ) -> RoundAnnouncement | None:
        """:meth:`wait_for_round` for :meth:`run`, waiting until ``round_timeout`` after the newest
        round's deadline; None when the job announced no round in that time (it ended)."""
        newest = self.latest_round
        timeout = round_timeout + (max(0.0, newest.seconds_left()) if newest is not None else 0.0)
        try:
            return self.wait_for_round(timeout=timeout, min_seconds_left=min_seconds_left)
        except BudgetSpentError:
            return None
        except PrivaggTimeout:
            latest = self.latest_round
            if latest is None or latest.seconds_left() > 0:
                raise  # nothing announced at all, or an open round with too little time left
            if newest is not None and latest.round != newest.round:
                raise PrivaggTimeout(
                    f"job {self.job.job_id} announced rounds up to {latest.round} within "
                    f"{timeout:g} s, but none with more than {min_seconds_left:g} s left by this "
                    "machine's clock (is its clock ahead, or are the rounds that short?)"
                ) from None
            return None

    def _wait_for_release(self, announcement: RoundAnnouncement, round_timeout: float) -> bool:
        """Waits for the model of ``announcement``'s round until ``round_timeout`` after its
        deadline. True when it was read or the job went on without releasing it (a later round
        announced on an earlier model, or a later model read); False when the job announced
        nothing more in that time (it ended)."""
        round_number = announcement.round
        deadline = time.time() + max(0.0, announcement.seconds_left()) + round_timeout
        while True:
            if self.model(round_number) is not None or self._latest_model_round > round_number:
                return True
            spent = self._budget_spent
            if spent is not None and round_number > spent.base_model_round:
                return False  # after the final model: refused at its close, for want of budget
            newest = self.latest_round
            if (
                newest is not None
                and newest.round > round_number
                and newest.base_model_round < round_number
            ):
                return True  # not released (a minimum cohort not met): the job went on
            remaining = deadline - time.time()
            if remaining <= 0:
                if newest is not None and newest.round > round_number:
                    raise PrivaggTimeout(
                        f"the model of round {round_number} of job {self.job.job_id} did not "
                        f"arrive within {round_timeout:g} s after the round's deadline, although "
                        f"round {newest.round} was announced on it"
                    )
                return False
            self.poll(min(0.5, remaining))

    def close(self) -> None:
        """Closes the Kafka clients (waits for unsent updates up to 10 s; drops them at once when
        no broker could be reached)."""
        if self._producer is not None:
            if self._unreachable is not None and not self._reached:
                self._producer.purge()
            self._producer.flush(10)
            self._producer = None
        if self._consumer is not None:
            self._consumer.close()
            self._consumer = None
            self._assigned = False
        if self._secure_consumer is not None:
            self._secure_consumer.close()
            self._secure_consumer = None
            self._secure_assigned = False

    def __enter__(self) -> PrivaggClient:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class _KafkaSecureTransport:
    """A secure round's transport over a :class:`PrivaggClient`'s producer and its consumer of
    the job's secure topic."""

    def __init__(self, client: PrivaggClient, timeout: float) -> None:
        self._client = client
        self._timeout = timeout

    def now(self) -> float:
        return time.time()

    def send(self, value: bytes) -> None:
        what = f"the secure aggregation message of {self._client.client_id}"
        self._client._produce(value, what, self._timeout)

    def receive(self, timeout: float) -> list[bytes]:
        return self._client._read_secure(timeout)
