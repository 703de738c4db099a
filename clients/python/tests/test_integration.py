"""Against a real broker and the real privagg job (PythonClientIT starts both and sets
PRIVAGG_BOOTSTRAP_SERVERS and PRIVAGG_SPEC). The spec: tensors weight [4, 3] and bias [4],
3 s rounds, m = 3, clipNorm 1, noise multiplier 0.01, server learning rate 1, budget .inf, so a
released model is the base model plus the average of the updates, give or take noise of std
0.01 * 1 / 3 per coordinate."""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Iterator, List

import numpy as np
import pytest
from confluent_kafka import Consumer, TopicPartition

from privagg_client import (
    GlobalModel,
    JobConfig,
    KafkaClientError,
    PrivaggClient,
    TensorShapeError,
    encode_update,
    load_model,
    state_dict_delta,
)

pytestmark = pytest.mark.skipif(
    not os.environ.get("PRIVAGG_BOOTSTRAP_SERVERS") or not os.environ.get("PRIVAGG_SPEC"),
    reason="needs a running job: set PRIVAGG_BOOTSTRAP_SERVERS and PRIVAGG_SPEC (PythonClientIT)",
)

M = 3
CLIP_NORM = 1.0
NOISE_MULTIPLIER = 0.01
# 6 noise standard deviations: a coordinate falls outside with probability 2e-9.
TOLERANCE = 6 * NOISE_MULTIPLIER * CLIP_NORM / M


@pytest.fixture(scope="module")
def bootstrap() -> str:
    return os.environ["PRIVAGG_BOOTSTRAP_SERVERS"]


@pytest.fixture(scope="module")
def job() -> JobConfig:
    return JobConfig.from_spec(os.environ["PRIVAGG_SPEC"])


@pytest.fixture(scope="module")
def clients(job: JobConfig, bootstrap: str) -> Iterator[List[PrivaggClient]]:
    made = [PrivaggClient(job, bootstrap, f"py-client-{i}") for i in range(M)]
    yield made
    for c in made:
        c.close()


def end_offsets(job: JobConfig, bootstrap: str) -> List[TopicPartition]:
    """The updates topic's partitions at their current end offsets."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "end-offsets"})
    try:
        topic = job.topics.updates
        partitions = consumer.list_topics(topic, timeout=10).topics[topic].partitions
        return [
            TopicPartition(topic, p, consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1])
            for p in partitions
        ]
    finally:
        consumer.close()


def updates_sent_by(client_id: str, job: JobConfig, bootstrap: str, since: List[TopicPartition]) -> List[bytes]:
    """The values of the updates topic keyed by ``client_id`` after the offsets ``since``, up to
    its end now (the job's heartbeats on that topic are keyed otherwise)."""
    end = {tp.partition: tp.offset for tp in end_offsets(job, bootstrap)}
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "updates-reader", "enable.auto.commit": False})
    try:
        consumer.assign(since)
        todo = {tp.partition for tp in since if tp.offset < end[tp.partition]}
        out = []
        while todo:
            msg = consumer.poll(5)
            assert msg is not None, f"partitions {todo} of {job.topics.updates} were not read to their end"
            if msg.error() is None:
                if msg.key() == client_id.encode():
                    out.append(msg.value())
                if msg.offset() + 1 >= end[msg.partition()]:
                    todo.discard(msg.partition())
        return out
    finally:
        consumer.close()


def test_rounds_are_announced_with_their_base_model_and_deadline(clients: List[PrivaggClient]) -> None:
    a = clients[0].wait_for_round(timeout=60, min_seconds_left=0.5)
    assert a.round >= 1 and a.base_model_round == a.round - 1
    # Rounds last 3 s (round 1 has 5 s of start grace more).
    assert 0.5 < a.seconds_left() <= 8.5
    assert clients[0].latest_round is not None and clients[0].latest_round.round >= a.round


def test_three_clients_updates_are_averaged_into_the_released_model(
    clients: List[PrivaggClient], tmp_path: Path
) -> None:
    torch = pytest.importorskip("torch")
    a = clients[0].wait_for_round(timeout=60, min_seconds_left=1.5)
    base = clients[0].wait_for_model(a.base_model_round, timeout=60)
    rng = np.random.default_rng(20261122)
    sent = [{"weight": rng.normal(0, 0.15, (4, 3)), "bias": rng.normal(0, 0.15, 4)} for _ in range(M)]

    clients[0].send_update(a.round, sent[0])  # NumPy arrays
    module = torch.nn.Linear(3, 4)  # a PyTorch state_dict delta
    module.load_state_dict(base.state_dict())
    with torch.no_grad():
        module.weight.add_(torch.from_numpy(sent[1]["weight"]).float())
        module.bias.add_(torch.from_numpy(sent[1]["bias"]).float())
    clients[1].send_update(a.round, state_dict_delta(module.state_dict(), base.state_dict()))
    clients[2].send_update(a.round, {k: v.tolist() for k, v in sent[2].items()})  # lists

    model = clients[2].wait_for_model(a.round, timeout=60)
    assert model.round == a.round and model.job_id == clients[0].job.job_id
    for name in ("weight", "bias"):
        change = sum(u[name] for u in sent) / M
        assert np.abs(change).max() > 4 * TOLERANCE, "the updates must move the model visibly"
        np.testing.assert_allclose(model.tensors[name], base.tensors[name] + change, rtol=0, atol=TOLERANCE)

    p = model.privacy
    assert (p.noise_multiplier, p.clip_norm, p.delta) == (NOISE_MULTIPLIER, CLIP_NORM, 1e-5)
    assert (p.accountant, p.sampling_mode, p.sampling_rate, p.noise_source) == ("rdp", "none", 1.0, "secure")
    assert p.charged_noise_multiplier == NOISE_MULTIPLIER and p.adjacency == "add-remove-one"
    assert math.isfinite(p.epsilon) and p.epsilon > base.privacy.epsilon
    assert p.budget_epsilon == math.inf

    model.save(tmp_path / "released.safetensors")
    model.save(tmp_path / "released.npz")
    for f in ("released.safetensors", "released.npz"):
        loaded = load_model(tmp_path / f)
        for name, values in model.tensors.items():
            np.testing.assert_array_equal(loaded[name], values)


def test_a_shape_error_is_raised_before_anything_is_sent(job: JobConfig, bootstrap: str) -> None:
    with PrivaggClient(job, bootstrap, "py-shape-checker") as client:
        a = client.wait_for_round(timeout=60, min_seconds_left=1.0)
        before = end_offsets(job, bootstrap)
        with pytest.raises(TensorShapeError, match=r"tensor 'weight' has shape \[3, 4\].*needs \[4, 3\]"):
            client.send_update(a.round, {"weight": np.zeros((3, 4)), "bias": np.zeros(4)})
        assert updates_sent_by("py-shape-checker", job, bootstrap, before) == []
        client.send_update(a.round, {"weight": np.zeros((4, 3)), "bias": np.zeros(4)})
        [value] = updates_sent_by("py-shape-checker", job, bootstrap, before)
        assert value == encode_update(job, a.round, "py-shape-checker", {"weight": np.zeros((4, 3)), "bias": np.zeros(4)})


def test_a_client_does_not_get_the_same_open_round_twice(job: JobConfig, bootstrap: str) -> None:
    with PrivaggClient(job, bootstrap, "py-follower") as client:
        first = client.wait_for_round(timeout=60, min_seconds_left=1.0)
        client.send_update(first.round, {"weight": np.zeros((4, 3)), "bias": np.zeros(4)})
        second = client.wait_for_round(timeout=60)
        assert second.round == first.round + 1 and second.base_model_round == first.round


def test_extra_kafka_config_is_used_and_its_secrets_never_printed(
    job: JobConfig, bootstrap: str, capfd: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    secret = "hunter2-do-not-print"
    # The broker listens in plaintext: a SASL client cannot talk to it. The handshake's failure
    # is final, and says so at once, naming SASL, without the secret.
    sasl = {
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": "PLAIN",
        "sasl.username": "alice",
        "sasl.password": secret,
    }
    with PrivaggClient(job, bootstrap, "py-sasl", kafka_config=sasl) as client:
        with pytest.raises(KafkaClientError, match="Kafka failed for good: .*SASL"):
            client.wait_for_round(timeout=4)
    with PrivaggClient(job, bootstrap, "py-plain", kafka_config={"security.protocol": "PLAINTEXT"}) as client:
        assert client.wait_for_round(timeout=60).round >= 1
    out, err = capfd.readouterr()
    assert secret not in out + err + caplog.text


def test_run_takes_part_in_rounds_of_the_running_job(job: JobConfig, bootstrap: str) -> None:
    step = 0.25  # an update of norm 0.87, inside clipNorm 1
    calls: list[tuple[int, int, np.ndarray]] = []

    def train(base: GlobalModel, round_number: int) -> dict[str, np.ndarray]:
        calls.append((base.round, round_number, base.tensors["weight"]))
        return {"weight": np.full((4, 3), step), "bias": np.zeros(4)}

    sent: list[int] = []
    with PrivaggClient(job, bootstrap, "py-runner") as client:
        result = client.run(train, rounds=2, round_timeout=60, on_sent=sent.append)

    assert not result.job_ended and result.late_rounds == ()
    first, second = result.rounds
    assert first < second and sent == [first, second]
    # Every round is released, so each trains on the model of the round before.
    assert [(b, r) for b, r, _ in calls] == [(first - 1, first), (second - 1, second)]
    # It waited for the model of its last round, which holds its update (the only one) / m.
    assert result.model is not None and result.model.round == second
    np.testing.assert_allclose(
        result.model.tensors["weight"], calls[1][2] + step / M, rtol=0, atol=TOLERANCE
    )
