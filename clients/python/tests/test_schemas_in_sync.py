"""The package's copy of the Avro schemas must equal the repository's, or Python and Java clients
would disagree on the wire."""

from __future__ import annotations

from pathlib import Path

import privagg_client

PACKAGE_SCHEMAS = Path(privagg_client.__file__).parent / "schemas"
HISTORY_DIRS = ("schemas/history", "src/main/resources/dev/privagg/io/history")


def _files(directory: Path) -> dict:
    return {p.name: p.read_bytes() for p in sorted(directory.glob("*.avsc"))}


def test_package_schemas_equal_the_repositorys(repo_root: Path) -> None:
    repo = _files(repo_root / "schemas")
    package = _files(PACKAGE_SCHEMAS)
    assert sorted(package) == sorted(repo), "copy schemas/*.avsc to clients/python/privagg_client/schemas/"
    for name in repo:
        assert package[name] == repo[name], f"{name} differs from schemas/{name}: copy it again"


def test_package_history_holds_every_earlier_global_model_schema(repo_root: Path) -> None:
    """Earlier GlobalModel schemas, wherever the repository keeps them, are in the package so that
    models written by an older job still decode (other records are not read by clients)."""
    repo: dict = {}
    for d in HISTORY_DIRS:
        repo.update({n: b for n, b in _files(repo_root / d).items() if n.startswith("GlobalModel-")})
    package = _files(PACKAGE_SCHEMAS / "history")
    assert sorted(package) == sorted(repo), "copy the GlobalModel history to privagg_client/schemas/history/"
    for name in repo:
        assert package[name] == repo[name], f"history/{name} differs from the repository's copy"
