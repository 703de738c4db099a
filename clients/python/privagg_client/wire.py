"""privagg's wire format: Avro single-object encoding of the records in ``schemas/``.

A record is ``C3 01``, then the 8-byte little-endian CRC-64-AVRO fingerprint of the writer
schema's parsing canonical form, then the Avro binary body. This module encodes ``ClientUpdate``
and ``SecureMessage`` and decodes ``RoundAnnouncement``, ``GlobalModel`` and ``SecureRound`` (of
the current schema or an earlier one kept in ``schemas/history/``), byte for byte as the Java
``dev.privagg.io.AvroCodec`` does.
"""

from __future__ import annotations

import io
import json
from collections.abc import Mapping
from functools import lru_cache
from importlib import resources
from typing import Any

import avro.errors
import avro.io
import avro.schema

from .errors import WireFormatError

MARKER = b"\xc3\x01"
"""The two bytes every single-object-encoded record starts with."""

HEADER_BYTES = 10
"""Marker plus fingerprint."""

_CRC64_EMPTY = 0xC15D213AA4D7A795


def _crc64_table() -> list[int]:
    table = []
    for i in range(256):
        fp = i
        for _ in range(8):
            fp = (fp >> 1) ^ (_CRC64_EMPTY & -(fp & 1))
        table.append(fp)
    return table


_CRC64_TABLE = _crc64_table()


def crc64_avro(data: bytes) -> int:
    """The CRC-64-AVRO fingerprint (the Avro specification's "Rabin" fingerprint) of ``data``."""
    fp = _CRC64_EMPTY
    for b in data:
        fp = (fp >> 8) ^ _CRC64_TABLE[(fp ^ b) & 0xFF]
    return fp


def fingerprint(schema: avro.schema.Schema) -> bytes:
    """The 8 bytes that follow the marker: the schema's canonical-form fingerprint, little-endian."""
    return crc64_avro(schema.canonical_form.encode("utf-8")).to_bytes(8, "little")


def _read_schema_text(name: str) -> Any:
    text = resources.files(__package__).joinpath("schemas").joinpath(name).read_text("utf-8")
    return json.loads(text)


@lru_cache(maxsize=None)
def _current_schemas() -> dict[str, avro.schema.Schema]:
    names = avro.schema.Names()
    out: dict[str, avro.schema.Schema] = {}
    # Tensor first: ClientUpdate and GlobalModel refer to it by name.
    for record in (
        "Tensor",
        "ClientUpdate",
        "GlobalModel",
        "RoundAnnouncement",
        "SecureMessage",
        "SecureRound",
    ):
        out[record] = avro.schema.make_avsc_object(_read_schema_text(record + ".avsc"), names)
    return out


def schema(record: str) -> avro.schema.Schema:
    """The current schema of ``record`` (``ClientUpdate``, ``GlobalModel``, ...)."""
    return _current_schemas()[record]


@lru_cache(maxsize=None)
def _writer_schemas(record: str) -> dict[bytes, avro.schema.Schema]:
    """Every schema ``record`` may have been written with, by fingerprint: the current one and
    every released one in ``schemas/history/<record>/v<n>.avsc``, as the repository keeps them."""
    current = schema(record)
    out = {fingerprint(current): current}
    # One name per joinpath: Python 3.9's and 3.10's Traversable takes no more.
    history = resources.files(__package__).joinpath("schemas").joinpath("history").joinpath(record)
    versions = sorted(history.iterdir(), key=lambda e: e.name) if history.is_dir() else []
    for entry in versions:
        if entry.name.endswith(".avsc"):
            old = avro.schema.make_avsc_object(json.loads(entry.read_text(encoding="utf-8")))
            out[fingerprint(old)] = old
    return out


def encode(record: str, datum: Mapping[str, Any]) -> bytes:
    """Single-object encoding of ``datum`` with the current schema of ``record``."""
    writer_schema = schema(record)
    buffer = io.BytesIO()
    buffer.write(MARKER)
    buffer.write(fingerprint(writer_schema))
    try:
        avro.io.DatumWriter(writer_schema).write(datum, avro.io.BinaryEncoder(buffer))
    except avro.errors.AvroTypeException as e:
        raise WireFormatError(f"cannot encode a {record}: {e}") from e
    return buffer.getvalue()


def split_header(value: bytes) -> tuple[bytes, bytes]:
    """The fingerprint and the body of a single-object-encoded record."""
    if len(value) < HEADER_BYTES or value[:2] != MARKER:
        start = value[:2].hex() if value else "nothing"
        raise WireFormatError(
            f"not an Avro single-object-encoded record: it starts with {start}, "
            f"not c301, or is shorter than {HEADER_BYTES} bytes ({len(value)})"
        )
    return value[2:HEADER_BYTES], value[HEADER_BYTES:]


def decode(record: str, value: bytes) -> dict[str, Any]:
    """Decodes a single-object-encoded ``record`` written with its current or an earlier schema,
    into the current schema's fields (fields added since get their defaults)."""
    fp, body = split_header(value)
    writers = _writer_schemas(record)
    writer_schema: avro.schema.Schema | None = writers.get(fp)
    if writer_schema is None:
        known = ", ".join(f.hex() for f in writers)
        raise WireFormatError(
            f"a {record} written with an unknown schema (fingerprint {fp.hex()}); this client "
            f"knows {known}. A newer privagg wrote it: update privagg_client."
        )
    reader = avro.io.DatumReader(writer_schema, schema(record))
    buffer = io.BytesIO(body)
    try:
        datum: dict[str, Any] = reader.read(avro.io.BinaryDecoder(buffer))
    except (avro.errors.AvroException, EOFError, UnicodeDecodeError, ValueError, OverflowError) as e:
        raise WireFormatError(f"a {record} whose body does not decode: {e}") from e
    if buffer.tell() != len(body):
        raise WireFormatError(
            f"a {record} with {len(body) - buffer.tell()} bytes after its body"
        )
    return datum
