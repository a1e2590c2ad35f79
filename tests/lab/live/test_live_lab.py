"""The live lab on real processes: up, faults seen in Prometheus, down leaving nothing."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from infersight.lab.live import cpu_limit, faults, stack
from infersight.lab.live.procs import LabError, listening
from infersight.lab.live.servers import ServerUnavailable
from servers import require

pytestmark = pytest.mark.server


def _require_lab() -> None:
    """Skip when a part is not installed; under CI (CI=true) fail instead."""
    try:
        stack.check_binaries()
    except ServerUnavailable as exc:
        if os.environ.get("CI") == "true":
            pytest.fail(str(exc))
        pytest.skip(str(exc))
    require("stress-ng")


def _until(check: Callable[[], bool], timeout: float = 40.0, step: float = 0.5) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(step)
    return False


def _query(lab: stack.Lab, expr: str) -> list[dict[str, object]]:
    with httpx.Client(timeout=5.0, trust_env=False) as http:
        r = http.get(lab.prometheus_url + "/api/v1/query", params={"query": expr})
    result: list[dict[str, object]] = r.json()["data"]["result"]
    return result


def _value(lab: stack.Lab, expr: str) -> float | None:
    res = _query(lab, expr)
    return float(res[0]["value"][1]) if res else None  # type: ignore[index]


def _requests(lab: stack.Lab, n: int, prefix: str = "q") -> list[int]:
    codes = []
    with httpx.Client(timeout=15.0, trust_env=False) as http:
        for i in range(n):
            r = http.get(lab.gateway_url + "/v1/answer", params={"q": f"{prefix} {i}"})
            codes.append(r.status_code)
    return codes


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[stack.Lab]:
    _require_lab()
    lab_dir = tmp_path_factory.mktemp("live-lab")
    started = stack.up(lab_dir, replicas=2)
    try:
        yield started
    finally:
        with contextlib.suppress(LabError):  # already down
            stack.down(lab_dir)


def test_every_part_healthy_and_scraped(lab: stack.Lab) -> None:
    rows = stack.status(lab.dir)
    assert {r.name for r in rows} >= {"haproxy", "api", "redis", "vector", "gpu-0", "gpu-1"}
    assert all(r.alive and r.healthy for r in rows), [r for r in rows if not r.healthy]
    assert [r.name for r in rows if r.note] == ["gpu-0", "gpu-1"]  # the modelled parts say so
    assert _requests(lab, 6) == [200] * 6
    jobs = {"haproxy", "api", "vector", "redis", "node", "vllm", "dcgm"}
    assert _until(lambda: {str(s["metric"]["job"]) for s in _query(lab, "up == 1")} >= jobs)  # type: ignore[index]
    # the catalog's HAProxy family finds its metrics in the real exporter's output
    assert _until(lambda: (_value(lab, "sum(haproxy_frontend_http_requests_total)") or 0) >= 6)
    # the API runs under a CPU limit: the kernel counts its periods, read under cAdvisor's names
    assert "CPU limit" in lab.api_cpu_limit
    if cpu_limit.writable() is None:
        periods = 'container_cpu_cfs_periods_total{job="cadvisor-api",node="api",container="api"}'
        assert _until(lambda: (_value(lab, periods) or 0) > 0)


def test_redis_maxmemory_cut_shows_evictions_then_clears(lab: stack.Lab) -> None:
    truth = faults.inject(lab, "redis-maxmemory")
    try:
        assert truth["target"] == "redis" and truth["expected"] == ["cache_capacity"]
        recorded = (lab.dir / "faults" / "truth.jsonl").read_text().splitlines()
        assert json.loads(recorded[-1])["fault"] == "redis-maxmemory"
        # distinct questions fill the cut cache: Redis must evict, and Prometheus must see it
        assert set(_requests(lab, 60, prefix="fill")) == {200}
        assert _until(lambda: (_value(lab, "max(redis_evicted_keys_total)") or 0) > 0)
    finally:
        faults.clear(lab)
    assert faults.active(lab) == []
    assert _value(lab, "max(redis_memory_max_bytes)") is not None
    assert _until(lambda: _value(lab, "max(redis_memory_max_bytes)") == 64 * 2**20)


def test_replica_kill_is_seen_and_routed_around_then_restarted(lab: stack.Lab) -> None:
    victim = lab.part("gpu-1")
    faults.inject(lab, "replica-kill", replica=1)
    try:
        assert _until(lambda: not victim.proc().alive(), timeout=10)
        assert _until(lambda: _value(lab, 'up{job="vllm",node="replica-1"}') == 0)
        # HAProxy's health check takes the dead replica out: requests still succeed
        assert _until(
            lambda: (
                _value(lab, 'haproxy_server_status{proxy="llm",server="replica-1",state="DOWN"}')
                == 1
            )
        )
        assert set(_requests(lab, 8, prefix="after-kill")) == {200}
    finally:
        faults.clear(stack.Lab.load(lab.dir))
    reloaded = stack.Lab.load(lab.dir)
    assert reloaded.part("gpu-1").pid != victim.pid
    assert reloaded.part("gpu-1").proc().alive()


def test_a_fault_given_an_old_reading_of_the_lab_acts_on_the_parts_running_now(
    lab: stack.Lab,
) -> None:
    """`lab` was read before replica-1 was restarted: the fault still reaches the process that
    runs now, and the record keeps it, so `lab down` stops it (a stale copy once saved the old
    pid back and left the new process running after `lab down`)."""
    running = stack.Lab.load(lab.dir).part("gpu-1")
    assert running.pid != lab.part("gpu-1").pid  # restarted by the test before
    faults.inject(lab, "replica-kill", replica=1)
    try:
        assert _until(lambda: not running.proc().alive(), timeout=10)
    finally:
        faults.clear(lab)
    again = stack.Lab.load(lab.dir).part("gpu-1")
    assert again.proc().alive() and again.pid not in (running.pid, lab.part("gpu-1").pid)


def test_gpu_clock_drop_on_one_replica_only(lab: stack.Lab) -> None:
    faults.inject(lab, "gpu-clock-drop", replica=0)
    try:
        assert _until(lambda: _value(lab, 'DCGM_FI_DEV_SM_CLOCK{node="replica-0"}') == 891)
        assert _until(lambda: _value(lab, 'DCGM_FI_DEV_SM_CLOCK{node="replica-1"}') == 1980)
        assert _value(lab, 'DCGM_FI_DEV_CLOCKS_EVENT_REASONS{node="replica-0"}') == 0x60
        time.sleep(11)  # two scrapes of the card's one-second ticks: it stays hot throttled
        assert _value(lab, 'DCGM_FI_DEV_GPU_TEMP{node="replica-0"}') == 91
    finally:
        faults.clear(lab)
    assert _until(lambda: _value(lab, 'DCGM_FI_DEV_SM_CLOCK{node="replica-0"}') == 1980)


def test_a_fault_for_a_while_clears_itself(lab: stack.Lab) -> None:
    faults.inject(lab, "batch-delay", replica=1, duration_s=2)
    assert [a["fault"] for a in faults.active(lab)] == ["batch-delay"]
    assert _until(lambda: faults.active(lab) == [], timeout=30)
    events = [
        json.loads(line)["event"]
        for line in (lab.dir / "faults" / "truth.jsonl").read_text().splitlines()
    ]
    assert events[-2:] == ["inject", "clear"]
    assert _until(lambda: _value(lab, 'infersight_batch_window_seconds{node="replica-1"}') != 0.25)


def test_unknown_fault_and_bad_replica_are_one_line_errors(lab: stack.Lab) -> None:
    with pytest.raises(LabError, match="unknown fault 'nope'"):
        faults.inject(lab, "nope")
    with pytest.raises(LabError, match="--replica must be 0-1"):
        faults.inject(lab, "batch-delay", replica=5)


def test_down_leaves_no_process_and_no_port(tmp_path: Path) -> None:
    _require_lab()
    bystander = subprocess.Popen(["sleep", "120"])  # not the lab's: must survive `lab down`
    try:
        lab = stack.up(tmp_path / "lab", replicas=1)
        try:
            faults.inject(lab, "cpu-hog", duration_s=60)  # a fault's helper process, too
            helpers = stack.fault_procs(lab.dir)
            assert helpers and all(p.alive() for p in helpers)
            with pytest.raises(LabError, match="already up"):
                stack.up(tmp_path / "lab", replicas=1)
        finally:
            stopped = stack.down(tmp_path / "lab")
        procs = [p.proc() for p in lab.parts] + helpers
        ports = [port for p in lab.parts for port in (p.port, *p.extra_ports)]
        assert set(stopped) >= {p.name for p in lab.parts}
        assert not [p.name for p in procs if p.alive()]
        assert not [port for port in ports if listening(port)]
        assert not (tmp_path / "lab" / stack.STATE).exists()
        assert bystander.poll() is None
        with pytest.raises(LabError, match="no lab in"):
            stack.down(tmp_path / "lab")
    finally:
        bystander.kill()
        bystander.wait()
