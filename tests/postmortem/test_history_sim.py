"""The bar on the simulator: the 02:17 incident finds its earlier twin among incidents of every
kind the simulator knows, and a cache-only incident does not rank the 02:17 one first."""

from __future__ import annotations

from pathlib import Path

import pytest
from sim_incidents import KINDS, diagnosed

from infersight.postmortem import new, scan, seen_before, similar
from infersight.postmortem.inputs import Incident

pytestmark = pytest.mark.sim

#: the earlier incidents are seed 0 of every kind; the ones asking are other seeds
PAST_SEED, NOW_SEED = 0, 1


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("postmortems")
    for kind in KINDS:
        entry, problems = new(Incident(diagnosed(kind, PAST_SEED)), folder)
        assert not problems
        text = entry.path.read_text()
        entry.path.write_text(text.replace("fixed_by: ''", f"fixed_by: the {kind} runbook", 1))
    return folder


def _kind(path: Path) -> str:
    """The kind a library file was drafted from, as the test wrote it into fixed_by."""
    return path.read_text().split("fixed_by: the ", 1)[1].split(" runbook", 1)[0]


def test_the_library_holds_one_of_every_kind(library: Path) -> None:
    lib = scan(library)
    assert len(lib.entries) == len(KINDS) >= 21 and not lib.problems
    assert sorted(_kind(e.path) for e in lib.entries) == sorted(KINDS)


def test_the_0217_incident_finds_its_earlier_twin_first(library: Path) -> None:
    matches = similar(diagnosed("incident_0217", NOW_SEED), scan(library))
    ranked = [_kind(m.entry.path) for m in matches]
    assert ranked[0] == "incident_0217", ranked
    # the twin stands well clear of the incidents that share one of its two causes
    assert matches[0].similarity.score - matches[1].similarity.score > 0.3
    assert set(ranked[1:3]) == {"vector_db_swap", "cache_capacity"}
    seen, _ = seen_before(diagnosed("incident_0217", NOW_SEED), library)
    assert seen[0].fixed_by == "the incident_0217 runbook"
    assert "same root causes: vector_db_swap, cache_capacity" in seen[0].why


def test_a_cache_only_incident_does_not_rank_the_0217_one_first(library: Path) -> None:
    matches = similar(diagnosed("cache_capacity", NOW_SEED), scan(library))
    ranked = [_kind(m.entry.path) for m in matches]
    assert ranked[0] == "cache_capacity", ranked
    assert ranked.index("incident_0217") > 0


@pytest.mark.parametrize("kind", ["vector_db_swap", "gpu_thermal_throttling", "vram_leak"])
def test_other_kinds_find_their_own_twin(library: Path, kind: str) -> None:
    matches = similar(diagnosed(kind, NOW_SEED), scan(library))
    assert [_kind(m.entry.path) for m in matches][:1] == [kind]


def test_a_healthy_window_is_like_no_incident(library: Path) -> None:
    dx = diagnosed("healthy_diurnal", NOW_SEED)
    assert not dx.root_causes
    assert [m for m in similar(dx, scan(library)) if m.entry.front.root_causes] == []
