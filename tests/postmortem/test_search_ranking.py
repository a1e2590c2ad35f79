"""The bar: over a library of a draft per fault kind (20 or more), each drafted from a
diagnosis (so each lists every cause it ruled out), a search for a cause's words returns the
drafts of that cause first, says where each row matched, and sets apart the drafts that only
rule it out."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from sim_incidents import KINDS, diagnosed

from infersight.postmortem import new, scan, search
from infersight.postmortem.inputs import Incident

pytestmark = pytest.mark.sim
SRC = Path(__file__).resolve().parents[2] / "src"
#: the fault kinds of the simulator (the healthy days and the two-cause 02:17 left out)
FAULTS = [k for k in KINDS if not k.startswith("healthy") and k != "incident_0217"]
#: a word for what users felt, typed with the cause's words
SYMPTOM_WORDS = ("", "latency", "errors", "slow", "instance")


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("postmortems")
    for kind in FAULTS:
        entry, problems = new(Incident(diagnosed(kind, 0)), folder)
        assert not problems and "was ruled out" in entry.body
    return folder


def _causes(library: Path) -> dict[str, set[str]]:
    return {e.front.id: set(e.front.root_causes) for e in scan(library).entries}


def test_the_library_holds_twenty_drafts_of_different_causes(library: Path) -> None:
    causes = _causes(library)
    assert len(causes) == len(FAULTS) >= 20
    assert len({min(c) for c in causes.values() if c}) >= 15  # not twenty copies of one


@pytest.mark.parametrize("extra", SYMPTOM_WORDS)
def test_a_causes_words_find_its_drafts_first(library: Path, extra: str) -> None:
    causes = _causes(library)
    wrong = []
    for cause in sorted(set().union(*causes.values())):
        own = {pid for pid, c in causes.items() if cause in c}
        hits, _, _ = search(library, f"{cause.replace('_', ' ')} {extra}", 50)
        first = [h.id for h in hits[: len(own)]]
        if set(first) != own:
            wrong.append(f"{cause} {extra}: {first} (its drafts: {sorted(own)})")
    assert wrong == []


def test_each_row_says_where_it_matched_and_what_only_rules_it_out(library: Path) -> None:
    hits, _, _ = search(library, "gpu thermal throttling", 50)
    assert hits[0].id.endswith("gpu-thermal-throttling")
    assert hits[0].fields[:2] == ("title", "root_causes")
    # drafts whose root causes hold the words (gpu_hardware_fault holds "gpu") come before
    # those where only the rest of the text does
    named = [i for i, h in enumerate(hits) if "root_causes" in h.fields]
    rest = [i for i, h in enumerate(hits) if not {"root_causes", "title"} & set(h.fields)]
    assert named and rest and max(named) < min(rest)
    assert "root causes" in hits[0].why and "[thermal]" in hits[0].snippet.casefold()
    aside = [h for h in hits if h.ruled_out_only]
    assert aside, "some drafts name throttling only as ruled out"
    # they come after every draft that holds the words anywhere else, and say so
    assert hits[-len(aside) :] == aside
    assert all(h.why == "ruled out" for h in aside)


def test_the_cli_lists_what_incidents_were_and_counts_the_rest(library: Path) -> None:
    res = subprocess.run(
        [sys.executable, "-m", "infersight", "postmortem", "search", "lb instance removed",
         "-l", str(library), "--format", "json"],
        capture_output=True, text=True, timeout=120,
        env={**os.environ, "PYTHONPATH": str(SRC)},
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    assert out["hits"][0]["id"].endswith("lb-instance-removed")
    assert "root causes" in out["hits"][0]["matched_in"]
    assert not any(h["ruled_out_only"] for h in out["hits"])
    assert out["ruled_out_only"] > 0  # the drafts that only rule it out are counted, not listed
