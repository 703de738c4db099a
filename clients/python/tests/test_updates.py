"""Updates are checked against the job's model before anything is sent."""

from __future__ import annotations

import numpy as np
import pytest

from privagg_client import (
    JobConfig,
    JobConfigError,
    NonFiniteValuesError,
    RecordTooLargeError,
    TensorShapeError,
    encode_update,
)

JOB = JobConfig("digits", {"weights": [64, 10], "bias": [10]})


def good() -> dict:
    return {"weights": np.zeros((64, 10)), "bias": np.zeros(10)}


def test_wrong_shape_names_the_tensor_and_the_expected_shape() -> None:
    update = good()
    update["weights"] = np.zeros((10, 64))
    with pytest.raises(TensorShapeError) as e:
        encode_update(JOB, 1, "c", update)
    assert str(e.value) == "tensor 'weights' has shape [10, 64], job digits's model needs [64, 10]"
    assert e.value.tensor == "weights"
    assert e.value.expected_shape == (64, 10)
    assert e.value.actual_shape == (10, 64)


def test_flattened_tensor_is_a_shape_error_too() -> None:
    update = good()
    update["weights"] = np.zeros(640)
    with pytest.raises(TensorShapeError, match=r"'weights' has shape \[640\].*needs \[64, 10\]"):
        encode_update(JOB, 1, "c", update)


def test_missing_tensor_names_it_and_its_shape() -> None:
    with pytest.raises(TensorShapeError, match=r"lacks tensor 'bias' \(shape \[10\]\)"):
        encode_update(JOB, 1, "c", {"weights": np.zeros((64, 10))})


def test_unknown_tensor_is_named_with_the_models_tensors() -> None:
    update = good()
    update["fc.weight"] = np.zeros(3)
    with pytest.raises(TensorShapeError, match=r"'fc.weight', which is not in .*weights \[64, 10\], bias \[10\]"):
        encode_update(JOB, 1, "c", update)


def test_non_finite_values_are_refused() -> None:
    update = good()
    update["bias"][3] = np.nan
    update["bias"][4] = np.inf
    with pytest.raises(NonFiniteValuesError, match="'bias' holds 2 NaN or infinite"):
        encode_update(JOB, 1, "c", update)


def test_values_that_overflow_float32_are_refused() -> None:
    update = good()
    update["bias"][0] = 1e300
    with pytest.raises(NonFiniteValuesError):
        encode_update(JOB, 1, "c", update)


def test_non_numeric_tensor_is_refused() -> None:
    update = good()
    update["bias"] = np.array(["x"] * 10)
    with pytest.raises(TensorShapeError, match="not real numbers"):
        encode_update(JOB, 1, "c", update)


def test_update_larger_than_max_record_bytes_is_refused() -> None:
    job = JobConfig("j", {"w": [1000]}, max_record_bytes=3000)
    with pytest.raises(RecordTooLargeError, match=r"at most 3000 \(maxRecordBytes\)"):
        encode_update(job, 1, "c", {"w": np.zeros(1000)})


def test_client_id_longer_than_the_job_takes_is_refused() -> None:
    job = JobConfig("j", {"w": [1]}, max_client_id_bytes=4)
    with pytest.raises(JobConfigError, match="6 UTF-8 bytes.*at most 4"):
        encode_update(job, 1, "ééé", {"w": [0]})


def test_negative_round_is_refused() -> None:
    with pytest.raises(JobConfigError, match="round must be a non-negative integer"):
        encode_update(JOB, -1, "c", good())


def test_integers_and_lists_are_converted_to_float32() -> None:
    job = JobConfig("j", {"w": [2]})
    assert encode_update(job, 1, "c", {"w": [1, 2]}) == encode_update(
        job, 1, "c", {"w": np.array([1.0, 2.0], dtype=np.float32)}
    )


def test_metadata_over_the_jobs_limit_is_refused_and_its_size_is_the_encoded_size() -> None:
    job = JobConfig("j", {"w": [1]}, max_metadata_bytes=65)
    plain = encode_update(job, 1, "c", {"w": [0]})
    metadata = {"site": "hospital-7", "note": "x" * 40}
    at_limit = encode_update(job, 1, "c", {"w": [0]}, metadata=metadata)
    # The job measures the union index and the map: 1 byte without metadata.
    assert len(at_limit) - len(plain) + 1 == 65
    with pytest.raises(JobConfigError, match=r"66 encoded bytes.*at most 65 \(maxMetadataBytes\)"):
        encode_update(job, 1, "c", {"w": [0]}, metadata=dict(metadata, note="x" * 41))


def test_strings_no_utf8_can_carry_are_refused_clearly() -> None:
    with pytest.raises(JobConfigError, match="client id .* is not valid Unicode"):
        encode_update(JOB, 1, "\ud800", good())
    with pytest.raises(JobConfigError, match="metadata value of 'k' .* is not valid Unicode"):
        encode_update(JOB, 1, "c", good(), metadata={"k": "\udc80"})
