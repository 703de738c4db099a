"""Without a broker the client fails at once, saying so once; its API's parameter names."""

from __future__ import annotations

import inspect
import logging
import time

import pytest

import privagg_client
from privagg_client import JobConfig, KafkaClientError, PrivaggClient

JOB = JobConfig("j", {"w": [1]})


CLOSED_PORT = "localhost:1"  # nobody listens there: a real connection refusal, no broker needed
UNREACHABLE = (
    r"no Kafka broker at localhost:1 could be reached \(localhost:1/bootstrap: Connect to .* "
    r"failed: Connection refused .*\); check bootstrap_servers \(host:port of a listener this "
    r"machine can reach, the broker started\) and kafka_config's security settings"
)


def test_a_wait_for_a_round_fails_at_once_when_no_broker_can_be_reached() -> None:
    with PrivaggClient(JOB, CLOSED_PORT, "c", connect_timeout=1) as client:
        start = time.monotonic()
        with pytest.raises(KafkaClientError, match=UNREACHABLE):
            client.wait_for_round(1, timeout=30)
        assert time.monotonic() - start < 5


def test_a_wait_for_a_model_fails_at_once_when_no_broker_can_be_reached() -> None:
    with PrivaggClient(JOB, CLOSED_PORT, "c", connect_timeout=1) as client:
        start = time.monotonic()
        with pytest.raises(KafkaClientError, match=UNREACHABLE):
            client.wait_for_model(0, timeout=30)
        assert time.monotonic() - start < 5
        assert client.latest_model is None and client.latest_round is None


def test_an_update_fails_at_once_when_no_broker_can_be_reached_and_close_does_not_wait() -> None:
    start = time.monotonic()
    with PrivaggClient(JOB, CLOSED_PORT, "c", connect_timeout=1) as client:
        with pytest.raises(KafkaClientError, match=UNREACHABLE):
            client.send_update(1, {"w": [0.0]}, timeout=30)
    assert time.monotonic() - start < 5


def test_a_broker_still_starting_gets_connect_timeout_before_the_client_gives_up() -> None:
    with PrivaggClient(JOB, CLOSED_PORT, "c", connect_timeout=3) as client:
        start = time.monotonic()
        with pytest.raises(KafkaClientError, match=UNREACHABLE):
            client.wait_for_round(1, timeout=30)
        assert 3 <= time.monotonic() - start < 8


def test_each_broker_failure_is_shown_once(
    capfd: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    """librdkafka prints its own line for each failure; the client's log does not repeat it."""
    with caplog.at_level(logging.DEBUG, logger="privagg_client"):
        with PrivaggClient(JOB, CLOSED_PORT, "c", connect_timeout=1) as client:
            with pytest.raises(KafkaClientError):
                client.wait_for_round(1, timeout=30)
    assert "Connection refused" in capfd.readouterr().err
    shown = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert [m for m in shown if "Connection refused" in m or "brokers are down" in m] == []


def test_no_function_or_method_of_the_api_has_a_parameter_named_round() -> None:
    """``round`` would shadow the builtin: round numbers are ``round_number``. (The records'
    ``round`` fields mirror the wire schema and are read as attributes.)"""
    records = (privagg_client.RoundAnnouncement, privagg_client.GlobalModel)
    checked = []
    for name in privagg_client.__all__:
        value = getattr(privagg_client, name)
        members = [value]
        if inspect.isclass(value):
            members = [
                m
                for n, m in inspect.getmembers(value, callable)
                if not (value in records and n in ("__init__", "__new__"))
            ]
        for member in members:
            try:
                parameters = inspect.signature(member).parameters
            except (TypeError, ValueError):
                continue
            checked.append(member)
            assert "round" not in parameters, f"{name}: {member} takes 'round'"
    assert PrivaggClient.send_update in checked and PrivaggClient.run in checked
    assert "round_number" in inspect.signature(PrivaggClient.wait_for_model).parameters
