"""A job's description, from its spec YAML or explicit arguments."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from privagg_client import JobConfig, JobConfigError, TensorSpec, Topics


def test_from_spec_reads_the_shipped_example(repo_root: Path) -> None:
    job = JobConfig.from_spec(repo_root / "jobs/digits-softmax.yaml")
    assert job.job_id == "digits-softmax"
    assert job.tensors == (TensorSpec("weights", (64, 10)), TensorSpec("bias", (10,)))
    assert job.topics == Topics("privagg.updates", "privagg.models", "privagg.rounds")
    assert job.parameters == 650
    assert job.max_record_bytes == 2 * 4 * 650 + (1 << 20)


def test_from_spec_reads_topics_and_limits(tmp_path: Path) -> None:
    spec = tmp_path / "s.yaml"
    spec.write_text(
        "jobId: a\nmodel:\n  tensors:\n    - {name: w, shape: [2, 3]}\n"
        "maxRecordBytes: 5000\nmaxClientIdBytes: 10\ntopics:\n  updates: u\n  models: m\n"
    )
    job = JobConfig.from_spec(spec)
    assert job.topics == Topics("u", "m", "privagg.rounds")
    assert (job.max_record_bytes, job.max_client_id_bytes) == (5000, 10)


@pytest.mark.parametrize(
    "yaml, message",
    [
        ("model: {tensors: [{name: w, shape: [1]}]}", "jobId is missing"),
        ("jobId: a", "model.tensors must be a list"),
        ("jobId: a\nmodel: {tensors: [{name: w}]}", r"model.tensors\[0\] must be"),
        ("jobId: a\nmodel: {tensors: [{name: w, shape: [0]}]}", "tensor 'w' needs a shape of positive integers"),
        ("jobId: 'a b'\nmodel: {tensors: [{name: w, shape: [1]}]}", "jobId must be letters"),
        ("jobId: a\nmodel: {tensors: [{name: w, shape: [1]}, {name: w, shape: [2]}]}", "repeated: \\['w'\\]"),
        ("[1, 2]", "must be a YAML mapping"),
        ("jobId: a\n  b: : c", "not valid YAML"),
    ],
)
def test_from_spec_refuses_invalid_specs_naming_the_key(tmp_path: Path, yaml: str, message: str) -> None:
    spec = tmp_path / "s.yaml"
    spec.write_text(yaml)
    with pytest.raises(JobConfigError, match=message):
        JobConfig.from_spec(spec)


def test_missing_spec_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(JobConfigError, match="cannot read the job spec .*nope.yaml"):
        JobConfig.from_spec(tmp_path / "nope.yaml")


def test_explicit_config_keeps_the_tensor_order() -> None:
    job = JobConfig("j", {"b": [3], "a": [1, 2]})
    assert list(job.shapes) == ["b", "a"]
    assert job.max_record_bytes == 2 * 4 * 5 + (1 << 20)


def test_a_model_over_2_to_27_parameters_is_refused() -> None:
    with pytest.raises(JobConfigError, match="at most 134217728"):
        JobConfig("j", {"w": [1 << 14, 1 << 14]})


@pytest.mark.parametrize(
    "value", ["'2030-06-01T09:30:00Z'", "2030-06-01T09:30:00Z", "2030-06-01T09:30:00+00:00"]
)
def test_rounds_start_at_is_read_as_the_job_reads_it(value: str) -> None:
    """rounds.startAt, quoted or a YAML timestamp, is epoch milliseconds in UTC, as in the job
    (JobSpecReaderTest reads the same instant)."""
    root = {
        "jobId": "a",
        "model": {"tensors": [{"name": "w", "shape": [1]}]},
        "rounds": {"timeout": "2s", "expectedClients": 2},
    }
    root["rounds"]["startAt"] = yaml.safe_load(f"v: {value}")["v"]
    assert JobConfig.from_spec_dict(root).start_at_millis == 1_906_536_600_000


def test_without_rounds_start_at_there_is_no_start_time() -> None:
    root = {"jobId": "a", "model": {"tensors": [{"name": "w", "shape": [1]}]}}
    assert JobConfig.from_spec_dict(root).start_at_millis is None
    root["rounds"] = {"startAt": None}  # an empty key, as the job reads it
    assert JobConfig.from_spec_dict(root).start_at_millis is None
    root["rounds"] = {"startAt": 1_906_536_600_000}  # what a YAML timestamp is to the job
    assert JobConfig.from_spec_dict(root).start_at_millis == 1_906_536_600_000


@pytest.mark.parametrize(
    "value, message",
    [
        ("'2030-06-01T09:30:00'", "a quoted one needs its zone"),
        ("'2030-06-01'", "a quoted one needs its zone"),
        ("9999-01-01T00:00:00Z", r"must be in \[2000-01-01T00:00:00Z, 2100-01-01T00:00:00Z\)"),
        ("1970-01-02T00:00:00Z", r"must be in \[2000"),
    ],
)
def test_a_start_time_the_job_refuses_is_refused_here_too(value: str, message: str) -> None:
    root = {
        "jobId": "a",
        "model": {"tensors": [{"name": "w", "shape": [1]}]},
        "rounds": {"startAt": yaml.safe_load(f"v: {value}")["v"]},
    }
    with pytest.raises(JobConfigError, match=message):
        JobConfig.from_spec_dict(root)


def test_a_rounds_start_at_that_is_no_instant_is_refused_naming_the_key() -> None:
    root = {
        "jobId": "a",
        "model": {"tensors": [{"name": "w", "shape": [1]}]},
        "rounds": {"startAt": "tomorrow 9am"},
    }
    with pytest.raises(JobConfigError, match=r"rounds.startAt must be an instant in UTC"):
        JobConfig.from_spec_dict(root)
