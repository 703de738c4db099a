"""The wire format, byte for byte: marker, fingerprint, Avro body, as the Java client writes it."""

from __future__ import annotations

import io
import os
from pathlib import Path

import avro.io
import avro.schema
import numpy as np
import pytest

from privagg_client import GlobalModel, JobConfig, RoundAnnouncement, WireFormatError, encode_update
from privagg_client import wire

# Fingerprints as the Java Avro library computes them (SchemaNormalization.parsingFingerprint64,
# written little-endian), for the schemas in schemas/ and schemas/history.
JAVA_FINGERPRINTS = {
    "ClientUpdate": "4be2da7b5b68adc2",
    "GlobalModel": "89812c09d5fcff68",
    "RoundAnnouncement": "a4d26bf85438da0c",
}
GLOBAL_MODEL_1 = "9e1a429d700f68a4"


def test_crc64_avro_of_the_empty_input_is_the_specifications_seed() -> None:
    assert wire.crc64_avro(b"") == 0xC15D213AA4D7A795


@pytest.mark.parametrize("record", sorted(JAVA_FINGERPRINTS))
def test_fingerprints_equal_javas(record: str) -> None:
    assert wire.fingerprint(wire.schema(record)).hex() == JAVA_FINGERPRINTS[record]


ROUND_ANNOUNCEMENT_1 = "1814e9d431b7362a"  # what the job writes for every open round


def test_history_fingerprint_equals_javas() -> None:
    assert GLOBAL_MODEL_1 in [fp.hex() for fp in wire._writer_schemas("GlobalModel")]
    assert ROUND_ANNOUNCEMENT_1 in [fp.hex() for fp in wire._writer_schemas("RoundAnnouncement")]


def test_encode_update_writes_marker_fingerprint_and_the_avro_body_byte_for_byte() -> None:
    job = JobConfig("j", {"w": [2]})
    value = encode_update(job, 1, "c", {"w": np.array([1.0, -2.0])})
    body = (
        b"\x02j"  # jobId: zigzag length 1, "j"
        + b"\x02"  # round 1
        + b"\x02c"  # clientId
        + b"\x02"  # tensors: a block of one
        + b"\x02w"  # name
        + b"\x02\x04\x00"  # shape: a block of one, 2, end
        + b"\x10"  # data: 8 bytes
        + np.array([1.0, -2.0], dtype="<f4").tobytes()
        + b"\x00"  # end of tensors
        + b"\x00"  # metadata: null (union branch 0)
    )
    assert value == b"\xc3\x01" + bytes.fromhex(JAVA_FINGERPRINTS["ClientUpdate"]) + body


def test_encode_update_carries_tensor_data_as_raw_little_endian_float32_row_major() -> None:
    job = JobConfig("j", {"a": [2, 3], "b": [1]})
    a = np.arange(6, dtype=np.float64).reshape(2, 3) / 7
    value = encode_update(job, 5, "client", {"a": np.asfortranarray(a), "b": [3]})
    assert a.astype("<f4").tobytes() in value
    assert np.array([3], dtype="<f4").tobytes() in value


def test_encode_update_with_metadata_round_trips_through_avro() -> None:
    job = JobConfig("j", {"w": [1]})
    value = encode_update(job, 2, "ü-client", {"w": [0.5]}, metadata={"k": "v"})
    reader = avro.io.DatumReader(wire.schema("ClientUpdate"))
    datum = reader.read(avro.io.BinaryDecoder(io.BytesIO(value[10:])))
    assert datum["clientId"] == "ü-client"
    assert datum["metadata"] == {"k": "v"}
    assert datum["tensors"][0]["shape"] == [1]


def _java_inputs(job: JobConfig) -> dict:
    """The values PythonClientIT encodes with Java: ((i * 7) % 23 - 11) / 16, exact in float32,
    counted on across the tensors."""
    out, i = {}, 0
    for t in job.tensors:
        n = t.size
        out[t.name] = (((np.arange(i, i + n) * 7) % 23 - 11) / 16).reshape(t.shape)
        i += n
    return out


@pytest.mark.skipif(
    "PRIVAGG_JAVA_UPDATE" not in os.environ, reason="needs a Java-encoded update (PythonClientIT)"
)
def test_encode_update_is_byte_identical_to_javas_client_updates_encode() -> None:
    java = Path(os.environ["PRIVAGG_JAVA_UPDATE"]).read_bytes()
    job = JobConfig.from_spec(os.environ["PRIVAGG_SPEC"])
    python = encode_update(job, 7, "cross-check-ü", _java_inputs(job))
    assert python.hex() == java.hex()


def test_round_announcement_decodes() -> None:
    value = wire.encode(
        "RoundAnnouncement",
        {
            "jobId": "j",
            "round": 4,
            "baseModelRound": 3,
            "deadlineMillis": 1_700_000_000_123,
            "budgetSpent": False,
        },
    )
    a = RoundAnnouncement.decode(value)
    assert (a.job_id, a.round, a.base_model_round, a.deadline_millis) == ("j", 4, 3, 1_700_000_000_123)
    assert a.deadline.year == 2023


def _privacy(**extra: object) -> dict:
    p = {
        "epsilon": 1.5,
        "delta": 1e-5,
        "accountant": "rdp",
        "noiseMultiplier": 1.1,
        "clipNorm": 1.0,
        "samplingRate": 0.2,
        "samplingMode": "server-poisson",
        "noiseSource": "secure",
        "adjacency": "add-remove-one",
        "budgetEpsilon": 4.0,
    }
    p.update(extra)
    return p


def _model(privacy: dict) -> dict:
    return {
        "jobId": "j",
        "round": 2,
        "tensors": [
            {"name": "w", "shape": [2, 2], "data": np.array([1, 2, 3, 4], dtype="<f4").tobytes()},
            {"name": "b", "shape": [1], "data": np.array([-1], dtype="<f4").tobytes()},
        ],
        "privacy": privacy,
    }


def test_global_model_decodes_tensors_and_privacy_statement() -> None:
    value = wire.encode("GlobalModel", _model(_privacy(chargedNoiseMultiplier=1.1)))
    m = GlobalModel.decode(value)
    assert list(m.tensors) == ["w", "b"]
    np.testing.assert_array_equal(m.tensors["w"], [[1, 2], [3, 4]])
    assert m.tensors["w"].dtype == np.float32 and m.tensors["w"].flags.writeable
    assert m.privacy.epsilon == 1.5 and m.privacy.sampling_rate == 0.2
    assert m.privacy.charged_noise_multiplier == 1.1
    assert m.privacy.is_private
    assert "epsilon 1.5 at delta 1e-05" in str(m.privacy)


def test_global_model_with_correlated_noise_states_its_blt_and_prefix_multiplier() -> None:
    blt = {
        "mechanism": "blt",
        "plannedRounds": 1000,
        "minSeparation": 5,
        "maxParticipations": 2,
        "theta": [0.99, 0.8],
        "omega": [0.06, 0.35],
        "noiseMultiplier": 1.08,
        "plannedSensitivity": 2.9,
        "sensitivity": 1.45,
        "prefixNoiseMultiplier": 2.16,
    }
    m = GlobalModel.decode(wire.encode("GlobalModel", _model(_privacy(correlatedNoise=blt))))
    c = m.privacy.correlated_noise
    assert c is not None and c.theta == (0.99, 0.8) and c.max_participations == 2
    assert c.prefix_noise_multiplier == 2.16
    assert "blt over 1000 rounds, at most 2 per client 5 apart" in str(m.privacy)
    plain = GlobalModel.decode(wire.encode("GlobalModel", _model(_privacy())))
    assert plain.privacy.correlated_noise is None


def test_global_model_written_with_the_earlier_schema_decodes_without_charged_noise_multiplier(
    repo_root: Path,
) -> None:
    history = repo_root / "schemas/history/GlobalModel/v1.avsc"
    old = avro.schema.parse(history.read_text())
    buffer = io.BytesIO()
    buffer.write(b"\xc3\x01" + wire.fingerprint(old))
    avro.io.DatumWriter(old).write(_model(_privacy()), avro.io.BinaryEncoder(buffer))
    assert buffer.getvalue()[2:10].hex() == GLOBAL_MODEL_1
    m = GlobalModel.decode(buffer.getvalue())
    assert m.round == 2 and m.privacy.charged_noise_multiplier is None
    np.testing.assert_array_equal(m.tensors["b"], [-1])


def test_decode_of_an_unknown_fingerprint_names_it_and_the_known_ones() -> None:
    value = wire.encode("GlobalModel", _model(_privacy()))
    forged = value[:2] + bytes(8) + value[10:]
    with pytest.raises(WireFormatError, match="unknown schema \\(fingerprint 0000000000000000\\).*b328c1abb03a731f"):
        GlobalModel.decode(forged)


@pytest.mark.parametrize("value", [b"", b"\xc3", b"\x00\x01" + bytes(10)])
def test_decode_without_the_marker_is_refused(value: bytes) -> None:
    with pytest.raises(WireFormatError, match="not an Avro single-object-encoded record"):
        RoundAnnouncement.decode(value)


def test_decode_of_a_truncated_body_is_refused() -> None:
    value = wire.encode("GlobalModel", _model(_privacy()))
    with pytest.raises(WireFormatError, match="does not decode"):
        GlobalModel.decode(value[:-5])


def test_decode_with_trailing_bytes_is_refused() -> None:
    value = wire.encode(
        "RoundAnnouncement",
        {"jobId": "j", "round": 1, "baseModelRound": 0, "deadlineMillis": 0, "budgetSpent": False},
    )
    with pytest.raises(WireFormatError, match="1 bytes after its body"):
        RoundAnnouncement.decode(value + b"\x00")
