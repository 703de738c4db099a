"""A spec is refused for a key the job's reader does not know, as ``privagg run`` refuses it
(issue 37: ``from_spec`` took ``expectedClient``). The keys come from job-spec-keys.json, which
the Java JobSpecKeysTest keeps equal to the reader."""

from __future__ import annotations

from pathlib import Path

import pytest

from privagg_client import JobConfig, JobConfigError
from privagg_client.spec_keys import nearest

SPEC = """\
jobId: a
model:
  tensors:
    - {name: w, shape: [2]}
rounds:
  timeout: 2s
  expectedClients: 4
privacy:
  clipNorm: 1.0
  noiseMultiplier: 1.0
  delta: 1.0e-5
  budgetEpsilon: 10
"""


def _read(tmp_path: Path, text: str) -> JobConfig:
    spec = tmp_path / "s.yaml"
    spec.write_text(text)
    return JobConfig.from_spec(spec)


def test_the_issues_misspelt_expected_clients_is_refused_naming_the_right_key(
    tmp_path: Path,
) -> None:
    with pytest.raises(
        JobConfigError,
        match=r"s.yaml: rounds.expectedClient is not a known key of rounds; "
        r"did you mean rounds.expectedClients\?$",
    ):
        _read(tmp_path, SPEC.replace("expectedClients", "expectedClient"))


def test_every_spec_of_the_repository_is_accepted(repo_root: Path) -> None:
    specs = sorted(repo_root.glob("jobs/*.yaml")) + sorted(repo_root.glob("examples/**/*.yaml"))
    assert len(specs) >= 7
    for spec in specs:
        JobConfig.from_spec(spec)


@pytest.mark.parametrize(
    "old, new, message",
    [
        # A section the client itself never reads is checked too.
        ("noiseMultiplier", "noiseMultipler", "privacy.noiseMultipler is not a known key of "
         r"privacy; did you mean privacy.noiseMultiplier\?"),
        ("jobId", "jobid", r"jobid is not a known key at the top level; did you mean jobId\?"),
        ("shape", "shap", r"model.tensors\[0\].shap is not a known key of model.tensors\[0\]; "
         r"did you mean model.tensors\[0\].shape\?"),
        ("  timeout: 2s", "  timeout: 2s\n  speed: 3", r"rounds.speed is not a known key of "
         r"rounds, whose keys are \[closeEarly, expectedClients, maxClients, minimumCohort, "
         r"nextRoundAtEarlyClose, startAt, startGrace, timeout\] \(remove it or fix its spelling\)"),
        ("privacy:", "privacy:\n  noise: {source: seeded, sed: 3}",
         r"privacy.noise.sed is not a known key of privacy.noise; did you mean "
         r"privacy.noise.seed\?"),
    ],
)
def test_an_unknown_key_is_refused_naming_its_section_and_the_known_keys(
    tmp_path: Path, old: str, new: str, message: str
) -> None:
    with pytest.raises(JobConfigError, match=message):
        _read(tmp_path, SPEC.replace(old, new, 1))


@pytest.mark.parametrize(
    "name, expected",
    [
        ("JOBID", "jobId"),  # case alone
        ("delt", "delta"),  # one edit on a short name
        ("clipNrm", "clipNorm"),
        ("clpNrm", "clipNorm"),  # two edits on a longer one
        ("clpNm", None),  # three are too many
        ("mod", None),  # a name of up to 4 characters allows one edit: "model" is two away
    ],
)
def test_the_nearest_key_follows_the_java_readers_rule(name: str, expected: str | None) -> None:
    candidates = frozenset({"jobId", "delta", "clipNorm", "model", "rounds"})
    assert nearest(name, candidates) == expected
