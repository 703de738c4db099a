"""The client's waits keep their timeouts when no broker answers; its API's parameter names."""

from __future__ import annotations

import inspect
import time

import pytest

import privagg_client
from privagg_client import JobConfig, PrivaggClient, PrivaggTimeout

JOB = JobConfig("j", {"w": [1]})


def test_wait_for_round_without_a_broker_times_out_on_time_naming_the_topics() -> None:
    with PrivaggClient(JOB, "localhost:1", "c", kafka_config={"log_level": 0}) as client:
        start = time.monotonic()
        with pytest.raises(PrivaggTimeout, match="round 1 of job j was not announced within 1.5 s; "
                           "topics privagg.rounds and privagg.models were not found at localhost:1"):
            client.wait_for_round(1, timeout=1.5)
        assert time.monotonic() - start < 3


def test_wait_for_model_without_a_broker_times_out(capfd: pytest.CaptureFixture[str]) -> None:
    with PrivaggClient(JOB, "localhost:1", "c", kafka_config={"log_level": 0}) as client:
        with pytest.raises(PrivaggTimeout, match="the model of round 0 of job j did not arrive within 1 s"):
            client.wait_for_model(0, timeout=1)
        assert client.latest_model is None and client.latest_round is None and client.model(0) is None


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
