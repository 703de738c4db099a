"""Reads extra librdkafka properties (security.protocol, sasl.*, ssl.*) from a file."""

from __future__ import annotations

from typing import Dict, Optional


def read_kafka_config(path: Optional[str]) -> Dict[str, str]:
    """``key=value`` lines; blank lines and ``#`` comments are skipped. None gives no properties."""
    if path is None:
        return {}
    config: Dict[str, str] = {}
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            key, sep, value = line.partition("=")
            if not sep or not key.strip():
                raise SystemExit(f"{path}:{number}: expected key=value")
            config[key.strip()] = value.strip()
    return config
