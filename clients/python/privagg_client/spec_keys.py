"""The keys a job spec may hold, section by section, as privagg's job spec reader knows them.

``schemas/job-spec-keys.json`` lists them; the Java test ``JobSpecKeysTest`` derives the same
list from the Java reader and fails when the two differ, so a spec this client takes has no key
``privagg run`` would refuse as unknown (values are still the job's to check).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from importlib import resources
from typing import Any

from .errors import JobConfigError


@functools.lru_cache(maxsize=1)
def known_keys() -> dict[str, frozenset[str]]:
    """Section paths (``""`` the top level, ``model.tensors[]`` any item of that list) to the
    keys the job's reader knows in them."""
    schemas = resources.files(__package__).joinpath("schemas")
    sections = json.loads(schemas.joinpath("job-spec-keys.json").read_text("utf-8"))["sections"]
    return {path: frozenset(keys) for path, keys in sections.items()}


def check_spec_keys(root: Mapping[str, Any], source: str) -> None:
    """Refuses the first key of the spec ``root`` that its section does not know, naming the key,
    its section, and the known key it resembles or else every known key there."""
    _check(root, "", "", known_keys(), source)


def _check(
    node: Any, section: str, where: str, sections: Mapping[str, frozenset[str]], source: str
) -> None:
    """``section``: ``node``'s path with ``[]`` for list items; ``where``: with their indices."""
    if isinstance(node, list):
        for i, item in enumerate(node):
            _check(item, f"{section}[]", f"{where}[{i}]", sections, source)
        return
    known = sections.get(section)
    if not isinstance(node, Mapping) or known is None:
        return  # a value, not a section: the job checks it
    for key, value in node.items():
        name = str(key)
        if name not in known:
            raise JobConfigError(_unknown(source, where, name, known))
        _check(value, _join(section, name), _join(where, name), sections, source)


def _unknown(source: str, where: str, name: str, known: frozenset[str]) -> str:
    key = _join(where, name)
    place = f"of {where}" if where else "at the top level"
    near = nearest(name, known)
    if near is not None:
        return f"{source}: {key} is not a known key {place}; did you mean {_join(where, near)}?"
    return (
        f"{source}: {key} is not a known key {place}, whose keys are "
        f"[{', '.join(sorted(known))}] (remove it or fix its spelling)"
    )


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def nearest(name: str, candidates: frozenset[str]) -> str | None:
    """The candidate ``name`` most resembles, or None, by the Java reader's rule: equal ignoring
    case, or within a case-insensitive edit distance of 1 (names of up to 4 characters) or 2."""
    best: str | None = None
    best_distance = 3
    for candidate in sorted(candidates):
        limit = 1 if min(len(name), len(candidate)) <= 4 else 2
        distance = _edit_distance(name.lower(), candidate.lower())
        if distance <= limit and distance < best_distance:
            best, best_distance = candidate, distance
    return best


def _edit_distance(a: str, b: str) -> int:
    """Levenshtein distance: the fewest insertions, deletions and substitutions from a to b."""
    previous = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        current = [i]
        for j, y in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (x != y)))
        previous = current
    return previous[-1]
