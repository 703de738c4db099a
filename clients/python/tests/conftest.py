"""Shared fixtures. Integration tests run when PRIVAGG_BOOTSTRAP_SERVERS and PRIVAGG_SPEC are set
(PythonClientIT sets them after starting a broker and the job); otherwise they are skipped."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO_ROOT = Path(os.environ.get("PRIVAGG_REPO_ROOT", Path(__file__).resolve().parents[3]))


@pytest.fixture(scope="session")
def repo_root() -> Path:
    if not (REPO_ROOT / "schemas").is_dir():
        pytest.fail(f"no schemas/ under {REPO_ROOT}; set PRIVAGG_REPO_ROOT to the repository root")
    return REPO_ROOT


def pytest_report_header(config: pytest.Config) -> str:
    import privagg_client

    return f"privagg_client from {Path(privagg_client.__file__).parent}"
