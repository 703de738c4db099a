"""Extra Kafka configuration reaches librdkafka, and secret values never appear in messages."""

from __future__ import annotations

import pytest

from privagg_client import JobConfig, KafkaClientError, PrivaggClient
from privagg_client.client import is_secret_key, redact

JOB = JobConfig("j", {"w": [1]})
SECRET = "hunter2-do-not-print"


@pytest.mark.parametrize(
    "key, secret",
    [
        ("sasl.password", True),
        ("ssl.key.password", True),
        ("ssl.keystore.password", True),
        ("sasl.oauthbearer.client.secret", True),
        ("ssl.key.pem", True),
        ("sasl.username", False),
        ("ssl.key.location", False),
        ("security.protocol", False),
    ],
)
def test_secret_keys(key: str, secret: bool) -> None:
    assert is_secret_key(key) == secret


def test_redact_replaces_secret_values_only() -> None:
    config = {"sasl.password": SECRET, "sasl.username": "alice"}
    assert redact(f"user alice password {SECRET}", config) == "user alice password ***"


def test_repr_shows_the_keys_not_the_values() -> None:
    client = PrivaggClient(JOB, "localhost:1", "c", {"sasl.password": SECRET})
    assert "sasl.password" in repr(client) and SECRET not in repr(client)


def test_an_invalid_property_is_refused_without_showing_the_secret() -> None:
    client = PrivaggClient(
        JOB, "localhost:1", "c", {"sasl.password": SECRET, "security.protocol": "not-a-protocol"}
    )
    with pytest.raises(KafkaClientError, match="security.protocol") as e:
        client.send_update(1, {"w": [0.0]})
    assert SECRET not in str(e.value)
