"""A statistics job through the real broker and job (PythonClientIT starts it and sets
PRIVAGG_BOOTSTRAP_SERVERS and PRIVAGG_STATISTICS_SPEC): three Python clients send rows with
send_statistics, and the release states the count and mean within 6 of its stated noise stds of
the truth (false-failure rate about 2e-9 per check)."""

from __future__ import annotations

import os

import numpy as np
import pytest

from privagg_client import JobConfig, PrivaggClient
from privagg_client.errors import JobConfigError

pytestmark = pytest.mark.skipif(
    not os.environ.get("PRIVAGG_BOOTSTRAP_SERVERS") or not os.environ.get("PRIVAGG_STATISTICS_SPEC"),
    reason="needs a running statistics job: set PRIVAGG_STATISTICS_SPEC (PythonClientIT)",
)


def test_three_clients_rows_are_released_as_statistics_within_their_stated_noise() -> None:
    job = JobConfig.from_spec(os.environ["PRIVAGG_STATISTICS_SPEC"])
    bootstrap = os.environ["PRIVAGG_BOOTSTRAP_SERVERS"]
    assert job.statistics is not None
    rows = {
        "py-stats-0": np.array([[1.0], [2.0], [9.0]]),
        "py-stats-1": {"x": [4.0, 12.0]},  # 12 is clipped to 10
        "py-stats-2": [[5.0]],
    }
    clients = [PrivaggClient(job, bootstrap, name) for name in rows]
    try:
        announcement = clients[0].wait_for_round(timeout=60, min_seconds_left=1.5)
        for client, data in zip(clients, rows.values()):
            client.send_statistics(announcement.round, data)
        model = clients[0].wait_for_model(announcement.round, timeout=90)
    finally:
        for c in clients:
            c.close()
    released = model.statistics
    assert released is not None
    count = released["count"]
    assert abs(count["value"] - 6) <= 6 * count["std"]
    mean = released["features"][0]["mean"]
    assert abs(mean["value"] - (1 + 2 + 9 + 4 + 10 + 5) / 6) <= 6 * mean["std"]
    assert [b["name"] for b in released["blocks"]] == [t.name for t in job.tensors]


def test_send_statistics_toATrainingJob_isRefusedBeforeSending() -> None:
    training = JobConfig("t", {"w": (1,)})
    client = PrivaggClient(training, os.environ["PRIVAGG_BOOTSTRAP_SERVERS"], "py-stats-x")
    try:
        with pytest.raises(JobConfigError, match="trains a model"):
            client.send_statistics(1, [[1.0]])
    finally:
        client.close()
