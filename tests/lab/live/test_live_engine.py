"""The live lab with a real vLLM engine (`lab up --engine vllm`): the engine's own metrics in
Prometheus, its card following its load, a killed engine restarted with a real model load.

Marked `engine`: it needs `infersight lab engine setup` first (2.5 GB), so `make test` leaves it
out and `make test-engine` runs it (there a missing engine is a failure, not a skip)."""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from infersight.lab import engine as lab_engine
from infersight.lab.live import faults, stack
from infersight.lab.live.procs import LabError, listening
from infersight.lab.live.servers import ServerUnavailable

pytestmark = [pytest.mark.server, pytest.mark.engine]


def _require() -> lab_engine.Engine:
    strict = os.environ.get("CI") == "true" or os.environ.get("INFERSIGHT_REQUIRE_ENGINE") == "1"
    try:
        stack.check_binaries()
        return lab_engine.find()
    except (ServerUnavailable, lab_engine.EngineUnavailable) as exc:
        if strict:
            pytest.fail(str(exc))
        pytest.skip(str(exc))


def _until(check: Callable[[], bool], timeout: float = 60.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.5)
    return False


def _value(lab: stack.Lab, expr: str) -> float | None:
    with httpx.Client(timeout=5.0, trust_env=False) as http:
        res = http.get(lab.prometheus_url + "/api/v1/query", params={"query": expr}).json()
    rows = res["data"]["result"]
    return float(rows[0]["value"][1]) if rows else None


def _ask(lab: stack.Lab, n: int, prefix: str) -> list[int]:
    with httpx.Client(timeout=60.0, trust_env=False) as http:
        return [
            http.get(lab.gateway_url + "/v1/answer", params={"q": f"{prefix} {i}"}).status_code
            for i in range(n)
        ]


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[stack.Lab]:
    engine = _require()
    lab_dir = tmp_path_factory.mktemp("engine-lab")
    started = stack.up(lab_dir, replicas=2, engine=engine)
    try:
        yield started
    finally:
        with contextlib.suppress(LabError):
            stack.down(lab_dir)


def test_real_engines_serve_and_say_so(lab: stack.Lab) -> None:
    assert lab.real_engine and lab.engine.startswith("vllm 0.32.0")
    with httpx.Client(timeout=5.0, trust_env=False) as http:
        text = http.get(lab.part("engine-0").metrics).text
    families = {
        ln.split()[2]
        for ln in text.splitlines()
        if ln.startswith("# TYPE vllm:") and not ln.split()[2].endswith("_created")
    }
    assert len(families) >= 35, sorted(families)
    from infersight.cli import app

    res = CliRunner().invoke(app, ["lab", "status", "--dir", str(lab.dir), "-f", "json"])
    doc = json.loads(res.stdout)
    assert doc["engine"] == lab.engine
    assert {p["name"] for p in doc["parts"]} >= {"engine-0", "engine-1", "gpu-0", "gpu-1"}


def test_answers_run_on_the_engine_and_reach_prometheus(lab: stack.Lab) -> None:
    assert set(_ask(lab, 12, "engine")) == {200}
    assert _until(lambda: (_value(lab, 'sum(vllm:request_success_total{job="vllm"})') or 0) >= 12)
    # one template before every question: the engines' prefix caches hit its blocks
    assert _until(lambda: (_value(lab, "sum(vllm:prefix_cache_hits_total)") or 0) > 0)
    # the modelled card under each engine is scraped as dcgm-exporter
    assert _value(lab, 'DCGM_FI_DEV_SM_CLOCK{node="replica-0"}') == 1980


def test_a_killed_engine_is_restarted_with_a_new_start_time(lab: stack.Lab) -> None:
    victim = lab.part("engine-1")
    before = _value(lab, 'process_start_time_seconds{job="vllm",node="replica-1"}')
    faults.inject(lab, "replica-kill", replica=1)
    try:
        assert _until(lambda: not victim.proc().alive(), timeout=15)
        assert _until(lambda: _value(lab, 'up{job="vllm",node="replica-1"}') == 0)
        assert set(_ask(lab, 4, "after-kill")) == {200}  # the other engine serves
    finally:
        faults.clear(stack.Lab.load(lab.dir))
    again = stack.Lab.load(lab.dir).part("engine-1")
    assert again.pid != victim.pid and listening(again.port)
    assert _until(
        lambda: (
            (_value(lab, 'process_start_time_seconds{job="vllm",node="replica-1"}') or 0)
            > (before or 0)
        )
    )


def _burst(lab: stack.Lab, n: int, prefix: str, max_tokens: int = 120) -> list[int]:
    """n distinct questions at once (distinct: a cached answer never reaches an engine)."""
    from concurrent.futures import ThreadPoolExecutor

    def one(i: int) -> int:
        with httpx.Client(timeout=120.0, trust_env=False) as http:
            params = {"q": f"{prefix} {i} {time.time()}", "max_tokens": max_tokens}
            return http.get(lab.gateway_url + "/v1/answer", params=params).status_code

    with ThreadPoolExecutor(n) as pool:
        return list(pool.map(one, range(n)))


def _argv(lab: stack.Lab, part: str) -> tuple[str, ...]:
    return stack.Lab.load(lab.dir).part(part).argv


def test_longer_requests_against_the_small_kv_cache_are_preempted(lab: stack.Lab) -> None:
    """The API's requests grow (passages quoted at length, 256-token answers) against the
    engines' 16 blocks: vLLM preempts running sequences to make room."""
    q = "sum(vllm:num_preemptions_total)"
    before = _value(lab, q) or 0
    truth = faults.inject(lab, "engine-kv-pressure")
    assert truth["target"] == "fleet"
    try:
        for k in range(4):
            _burst(lab, 8, f"kv{k}", max_tokens=16)  # the API asks 256 whatever it is told
            if (_value(lab, q) or 0) > before:
                break
        assert _until(lambda: (_value(lab, q) or 0) > before), "no preemption"
    finally:
        faults.clear(stack.Lab.load(lab.dir))


def _completion_s(lab: stack.Lab, part: str, tokens: int = 64) -> float:
    """Seconds one request takes on this engine, asked directly (not through the gateway)."""
    from infersight.lab.live.llm_client import LlmClient

    client = LlmClient("openai", "", lab_engine.SERVED_MODEL)
    path, body = client.request(f"timing {time.time()}", tokens)
    start = time.perf_counter()
    with httpx.Client(timeout=120.0, trust_env=False) as http:
        r = http.post(f"http://127.0.0.1:{lab.part(part).port}{path}", json=body)
    assert r.status_code == 200, r.text[:200]
    return time.perf_counter() - start


def test_a_cpu_limit_slows_the_engine_by_the_kernels_quota(lab: stack.Lab) -> None:
    from infersight.lab.live import cpu_limit

    why = cpu_limit.writable()
    if why is not None:
        pytest.skip(why)
    free = min(_completion_s(lab, "engine-1") for _ in range(3))
    truth = faults.inject(lab, "engine-cpu-limit", replica=1)
    group = cpu_limit.CpuLimit(Path(truth["params"]["cgroup"]), truth["params"]["v2"])
    try:
        limited = _completion_s(lab, "engine-1")
        assert limited > 3 * free, (free, limited)
        assert group.stat["nr_throttled"] > 0
    finally:
        faults.clear(stack.Lab.load(lab.dir))
    assert not group.path.exists()


def test_a_restart_loads_and_compiles_out_of_rotation(lab: stack.Lab) -> None:
    """SIGTERM, then the model loaded again and compiled from an emptied cache: the replica
    is down meanwhile, the other serves, and it comes back as a new process."""
    start = 'process_start_time_seconds{job="vllm",node="replica-0"}'
    before = _value(lab, start) or 0
    old = stack.Lab.load(lab.dir).part("engine-0")
    faults.inject(lab, "engine-restart", replica=0)
    try:
        new = stack.Lab.load(lab.dir).part("engine-0")
        assert new.pid != old.pid and "--enforce-eager" not in new.argv
        assert _until(lambda: _value(lab, 'up{job="vllm",node="replica-0"}') == 0, timeout=30)
        # once the gateway's health check has taken it out (a request sent in the second
        # before is a 502, as in any restart), the other engine serves every request
        assert _until(lambda: set(_ask(lab, 4, f"restarting {time.time()}")) == {200}, 30)
    finally:
        faults.clear(stack.Lab.load(lab.dir))  # waits until it answers again
    assert any((lab.dir / "engine-cache" / "engine-0").rglob("*"))  # compiled anew there
    assert _until(lambda: (_value(lab, start) or 0) > before)


def test_capped_sequences_make_the_engine_queue(lab: stack.Lab) -> None:
    q = "max(max_over_time(vllm:num_requests_waiting[1m]))"
    faults.inject(lab, "engine-seqs-cap")
    try:
        for k in range(4):
            _burst(lab, 16, f"cap{k}", max_tokens=256)
            if (_value(lab, q) or 0) > 0:
                break
        assert _until(lambda: (_value(lab, q) or 0) > 0), "nothing waited on the capped engine"
    finally:
        faults.clear(stack.Lab.load(lab.dir))


def test_an_admission_limit_gives_vllms_own_rejections(lab: stack.Lab) -> None:
    q = "sum(vllm:admission_rejections_total)"
    truth = faults.inject(lab, "engine-admission-limit")
    assert truth["target"] == "fleet"
    assert all("--max-num-queued-reqs" in _argv(lab, f"engine-{i}") for i in range(2))
    try:
        for k in range(4):
            _burst(lab, 16, f"adm{k}", max_tokens=256)
            if (_value(lab, q) or 0) > 0:
                break
        assert _until(lambda: (_value(lab, q) or 0) > 0), "the engine refused nothing"
    finally:
        faults.clear(stack.Lab.load(lab.dir))


def test_a_stopped_engine_core_still_answers_scrapes_and_makes_no_tokens(lab: stack.Lab) -> None:
    truth = faults.inject(lab, "engine-hang", replica=0)
    try:
        assert truth["params"]["stopped"]
        time.sleep(12)  # two scrapes with the core stopped
        assert _value(lab, 'up{job="vllm",node="replica-0"}') == 1  # the API server answers
        rate = 'sum(rate(vllm:generation_tokens_total{node="replica-0"}[30s]))'
        assert _until(lambda: _value(lab, rate) == 0, timeout=60)
    finally:
        faults.clear(stack.Lab.load(lab.dir))
    assert set(_ask(lab, 4, "after-hang")) == {200}


def test_a_changed_template_loses_the_prefix_cache(lab: stack.Lab) -> None:
    def totals() -> tuple[float, float]:
        hits = _value(lab, "sum(vllm:prefix_cache_hits_total)") or 0.0
        return hits, _value(lab, "sum(vllm:prefix_cache_queries_total)") or 0.0

    def ratio_of_a_burst(prefix: str) -> float:
        """Hits over queries of one burst, from the counters Prometheus scraped around it."""
        time.sleep(6)  # a scrape after whatever came before
        h0, q0 = totals()
        assert set(_burst(lab, 8, prefix, max_tokens=16)) == {200}
        assert _until(lambda: totals()[1] > q0)
        time.sleep(6)  # the burst's last answers scraped too
        h1, q1 = totals()
        return (h1 - h0) / (q1 - q0)

    assert ratio_of_a_burst("tmpl-before") > 0.3
    faults.inject(lab, "engine-template-change")
    try:
        assert ratio_of_a_burst("tmpl-after") < 0.1
    finally:
        faults.clear(stack.Lab.load(lab.dir))
