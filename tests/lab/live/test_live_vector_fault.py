"""`vector-out-of-ram` on a real lab: the vector service's on-disk vectors leave the page cache,
every rescoring read becomes a major page fault served from disk, search slows, and the
catalog's own expressions see it in Prometheus; `clear` brings the index back into RAM."""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterator

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from infersight.exporters import load_catalog
from infersight.lab.live import faults, stack
from infersight.lab.live.procs import LabError
from infersight.lab.live.servers import ServerUnavailable
from infersight.lab.live.vector_service import embed

pytestmark = pytest.mark.server

SEARCHES = 150
COUNTER = "infersight_dependency_major_page_faults_total"


def _require_lab() -> None:
    """Skip when a part is not installed; under CI (CI=true) fail instead."""
    try:
        stack.check_binaries()
    except ServerUnavailable as exc:
        if os.environ.get("CI") == "true":
            pytest.fail(str(exc))
        pytest.skip(str(exc))


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[stack.Lab]:
    _require_lab()
    lab_dir = tmp_path_factory.mktemp("vector-lab")
    started = stack.up(lab_dir, replicas=1)
    try:
        yield started
    finally:
        with contextlib.suppress(LabError):
            stack.down(lab_dir)


def _vector_url(lab: stack.Lab) -> str:
    return f"http://127.0.0.1:{lab.part('vector').port}"


def _own_metrics(lab: stack.Lab) -> dict[str, float]:
    """The vector service's own counters and gauges for `dependency="vector_db"`."""
    with httpx.Client(timeout=5.0, trust_env=False) as http:
        text = http.get(_vector_url(lab) + "/metrics").text
    out: dict[str, float] = {}
    for fam in text_string_to_metric_families(text):
        for s in fam.samples:
            if s.labels.get("dependency") == "vector_db" and "le" not in s.labels:
                out[s.name] = s.value
    return out


def _search(lab: stack.Lab, n: int, tag: str) -> dict[str, float]:
    """`n` searches straight to the vector service; per search: major faults and mean time."""
    before = _own_metrics(lab)
    with httpx.Client(timeout=10.0, trust_env=False) as http:
        for i in range(n):
            body = {"vector": embed(f"{tag} {i}").tolist(), "k": 4}
            assert http.post(_vector_url(lab) + "/search", json=body).status_code == 200
    after = _own_metrics(lab)
    t_sum, t_count = (
        "infersight_dependency_duration_seconds_sum",
        ("infersight_dependency_duration_seconds_count"),
    )
    return {
        "faults": (after[COUNTER] - before[COUNTER]) / n,
        "mean_s": (after[t_sum] - before[t_sum]) / (after[t_count] - before[t_count]),
        "resident": after["infersight_vector_index_resident_bytes"],
        "size": after["infersight_vector_index_bytes"],
    }


def _prom(lab: stack.Lab, expr: str) -> float | None:
    with httpx.Client(timeout=5.0, trust_env=False) as http:
        r = http.get(lab.prometheus_url + "/api/v1/query", params={"query": expr})
    for s in r.json()["data"]["result"]:
        if s["metric"].get("node") == "vector":
            return float(s["value"][1])
    return None


def _until(check: Callable[[], bool], timeout: float = 25.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.5)
    return False


def test_vector_out_of_ram_pages_from_disk_then_clears(lab: stack.Lab) -> None:
    # the catalog's own expression for the rule's paging signal, on the lab's identity label
    fam = load_catalog().families["infersight"]
    paging = fam.mappings["dependency.vector_major_faults_rate"][0].render("30s", ["node"])

    base = _search(lab, SEARCHES, "base")
    assert base["faults"] < 0.1, base  # the whole index is in RAM
    assert base["resident"] == base["size"] > 0

    # Prometheus holds a sample from before the fault (rate() needs one on each side)
    now = _own_metrics(lab)[COUNTER]
    assert _until(lambda: _prom(lab, COUNTER) == now)

    truth = faults.inject(lab, "vector-out-of-ram")
    try:
        assert truth["target"] == "vector" and truth["expected"] == ["vector_db_swap"]
        hit = _search(lab, SEARCHES, "paged")
        # every search rescored from pages the kernel must read back from disk
        assert hit["faults"] >= 2, hit
        assert hit["mean_s"] >= 3 * base["mean_s"], (base, hit)
        assert hit["resident"] < 0.5 * hit["size"], hit
        # Prometheus sees the paging through the catalog's mapping
        assert _until(lambda: (_prom(lab, paging) or 0.0) > 1.0), paging
    finally:
        faults.clear(lab)
    assert faults.active(lab) == []

    # another process's load can page this one's own code or a page of its index out for a
    # moment (the counter is the whole process's): the paging has cleared when a round of
    # searches reads nothing from disk, within a few rounds; a fault left on pages every one
    for _ in range(4):
        after = _search(lab, SEARCHES, "after")
        if after["faults"] < 0.1 and after["resident"] == after["size"]:
            break
    assert after["faults"] < 0.1, after
    assert after["mean_s"] < 2 * base["mean_s"] + 0.0005, (base, after)
    assert after["resident"] == after["size"]
    assert _until(lambda: _prom(lab, "infersight_vector_index_resident_bytes") == after["size"])
