"""The package's copy of the Avro schemas must equal the repository's, or Python and Java clients
would disagree on the wire."""

from __future__ import annotations

from pathlib import Path

import pytest

import privagg_client

PACKAGE_SCHEMAS = Path(privagg_client.__file__).parent / "schemas"


def _files(directory: Path) -> dict:
    return {p.name: p.read_bytes() for p in sorted(directory.glob("*.avsc"))}


def test_package_schemas_equal_the_repositorys(repo_root: Path) -> None:
    repo = _files(repo_root / "schemas")
    package = _files(PACKAGE_SCHEMAS)
    assert sorted(package) == sorted(repo), "copy schemas/*.avsc to clients/python/privagg_client/schemas/"
    for name in repo:
        assert package[name] == repo[name], f"{name} differs from schemas/{name}: copy it again"


@pytest.mark.parametrize("record", ["GlobalModel", "RoundAnnouncement"])
def test_package_history_holds_every_released_version_of_what_clients_read(
    repo_root: Path, record: str
) -> None:
    """Every released schema of a record clients read (schemas/history/<record>/vN.avsc) is in the
    package, so that models and announcements written by an older job still decode."""
    repo = _files(repo_root / "schemas" / "history" / record)
    package = _files(PACKAGE_SCHEMAS / "history" / record)
    assert repo, f"schemas/history/{record}/ holds no version"
    assert sorted(package) == sorted(repo), (
        f"copy schemas/history/{record}/*.avsc to privagg_client/schemas/history/{record}/"
    )
    for name in repo:
        assert package[name] == repo[name], f"history/{record}/{name} differs from the repository's"


def test_the_secure_schemas_are_the_newest_recorded_versions(repo_root: Path) -> None:
    """The client writes SecureMessage and reads SecureRound with the current schemas only: they
    must be the newest versions recorded in schemas/history (v3 added the consistency round)."""
    for record in ("SecureMessage", "SecureRound"):
        versions = sorted(
            (repo_root / "schemas" / "history" / record).glob("v*.avsc"),
            key=lambda p: int(p.stem[1:]),
        )
        assert versions, f"schemas/history/{record}/ holds no version"
        assert (PACKAGE_SCHEMAS / f"{record}.avsc").read_bytes() == versions[-1].read_bytes()
