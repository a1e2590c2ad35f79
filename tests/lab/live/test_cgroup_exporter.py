"""The lab's cgroup counters under cAdvisor's names: what a group's `cpu.stat` becomes, a part
without a limit answering no series, and the catalog reading the throttled share from them; no
cgroup or server needed (a folder stands in for the cgroup root)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
from prometheus_client.parser import text_string_to_metric_families

from infersight.lab.live.cgroup_exporter import app, exposition

V2_STAT = "usage_usec 2500000\nnr_periods 400\nnr_throttled 150\nthrottled_usec 9000000\n"


def _samples(text: str) -> dict[str, tuple[dict[str, str], float]]:
    out = {}
    for fam in text_string_to_metric_families(text):
        for s in fam.samples:
            out[s.name] = (s.labels, s.value)
    return out


def test_cgroup_v2_counters_become_cadvisors_names_in_their_units() -> None:
    stat = dict(line.split() for line in V2_STAT.splitlines())
    got = _samples(exposition("api", {k: int(v) for k, v in stat.items()}))
    labels = {"container": "api", "pod": "api", "namespace": "lab"}
    assert got == {
        "container_cpu_cfs_periods_total": (labels, 400.0),
        "container_cpu_cfs_throttled_periods_total": (labels, 150.0),
        "container_cpu_cfs_throttled_seconds_total": (labels, 9.0),
        "container_cpu_usage_seconds_total": (labels, 2.5),
    }


def test_cgroup_v1_throttled_time_is_in_nanoseconds() -> None:
    got = _samples(
        exposition("api", {"nr_periods": 10, "nr_throttled": 4, "throttled_time": 3 * 10**9})
    )
    assert got["container_cpu_cfs_throttled_seconds_total"][1] == 3.0
    assert "container_cpu_usage_seconds_total" not in got  # v1 keeps usage in cpuacct


def test_a_part_without_a_limit_answers_no_series(tmp_path: Path) -> None:
    group = tmp_path / "infersight-lab-api"
    group.mkdir()
    (group / "cpu.stat").write_text(V2_STAT)
    (tmp_path / "cgroup.controllers").write_text("cpu memory\n")

    async def get(*paths: str) -> list[httpx.Response]:
        transport = httpx.ASGITransport(app=app("infersight-lab-", root=tmp_path))
        async with httpx.AsyncClient(transport=transport, base_url="http://lab") as client:
            return [await client.get(p) for p in paths]

    limited, free, odd = asyncio.run(get("/metrics/api", "/metrics/engine-0", "/metrics/..%2Fetc"))
    assert limited.status_code == 200
    assert _samples(limited.text)["container_cpu_cfs_throttled_periods_total"][1] == 150.0
    assert free.status_code == 200 and free.text == ""
    assert odd.status_code == 404
