"""Drills against the live lab: every starter runbook made for the lab runs, verifies on the
lab's Prometheus and is rolled back, leaving the lab as it was; runbooks broken the ways
runbooks rot (an endpoint that moved, a binary that is gone, a check that never turns true)
are reported broken. One small lab (two replicas) for the module."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from infersight.lab.live import faults, stack
from infersight.lab.live.procs import LabError
from infersight.lab.live.servers import ServerUnavailable
from infersight.runbooks import load_library, resp

pytestmark = [pytest.mark.server, pytest.mark.slow]
SRC = Path(__file__).resolve().parents[2] / "src"


def _until(check: Callable[[], bool], timeout: float = 60.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(httpx.HTTPError, KeyError, IndexError):
            if check():
                return True
        time.sleep(0.5)
    return False


def _query(lab: stack.Lab, expr: str) -> list[dict[str, Any]]:
    with httpx.Client(timeout=5.0, trust_env=False) as http:
        r = http.get(lab.prometheus_url + "/api/v1/query", params={"query": expr})
    out: list[dict[str, Any]] = r.json()["data"]["result"]
    return out


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[stack.Lab]:
    try:
        stack.check_binaries()
    except ServerUnavailable as exc:
        if os.environ.get("CI") == "true":
            pytest.fail(str(exc))
        pytest.skip(str(exc))
    lab_dir = tmp_path_factory.mktemp("drill-lab")
    # the lab's parts run this source tree's code (with a relative PYTHONPATH they would
    # import whatever infersight the interpreter finds from the lab's folder)
    old = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(SRC), old) if p)
    try:
        started = stack.up(lab_dir, replicas=2)
    finally:
        if old is None:
            del os.environ["PYTHONPATH"]
        else:
            os.environ["PYTHONPATH"] = old
    try:
        jobs = {"haproxy", "api", "redis", "vllm"}
        assert _until(lambda: {s["metric"]["job"] for s in _query(started, "up == 1")} >= jobs)
        yield started
    finally:
        with contextlib.suppress(LabError):
            stack.down(lab_dir)


def _drill(lab: stack.Lab, *args: str) -> tuple[int, list[dict[str, Any]], str]:
    proc = subprocess.run(
        [sys.executable, "-m", "infersight", "runbook", "drill", "--against", str(lab.dir),
         "--audit", str(lab.dir / "audit.jsonl"), "--format", "json", *args],
        capture_output=True, text=True, timeout=300,
        env={**os.environ, "PYTHONPATH": str(SRC)},
    )  # fmt: skip
    results = json.loads(proc.stdout) if proc.stdout.strip() else []
    return proc.returncode, results, proc.stderr


def test_every_lab_starter_runs_and_verifies_there(lab: stack.Lab) -> None:
    # a replica stuck on a fixed 250 ms batching window: the window the runbook must shrink
    faults.inject(lab, "batch-delay", replica=0)
    gpu0 = f"127.0.0.1:{lab.ports['gpu-0']}"
    window = f'infersight_batch_window_seconds{{instance="{gpu0}",name="llm"}} == 0.25'
    try:
        assert _until(lambda: bool(_query(lab, window)))
        code, results, err = _drill(lab)
    finally:
        faults.clear(lab)
    verdicts = {r["runbook"]: r["verdict"] for r in results}
    made_for_lab = {b.id for b in load_library().books if "lab" in b.targets}
    assert len(made_for_lab) >= 7
    assert {i: verdicts[i] for i in made_for_lab} == dict.fromkeys(made_for_lab, "works"), err
    assert code == 0
    assert verdicts["scale-out"] == "skipped" and "degrade" in made_for_lab
    run = next(r for r in results if r["runbook"] == "batch-window-adaptive")["run"]
    assert run["verify"]["verdict"] == "holds" and run["restore"][0]["ok"]
    # every change was undone: the lab is as it was
    assert resp.call("127.0.0.1", lab.ports["redis"], ["CONFIG", "GET", "maxmemory"])[1] == str(
        64 * 1024 * 1024
    )
    up = 'haproxy_server_status{proxy="llm",state="UP"} == 1'
    assert _until(
        lambda: {s["metric"]["server"] for s in _query(lab, up)} == {"replica-0", "replica-1"}
    )
    with httpx.Client(trust_env=False) as http:
        state = http.get(f"http://127.0.0.1:{lab.ports['api']}/admin/serving").json()
        flags = http.get(f"http://127.0.0.1:{lab.ports['api']}/admin/flags").json()
        answer = http.get(lab.gateway_url + "/v1/answer", params={"q": "after the drill"})
    assert state["admissions"]["api_workers"]["max_concurrency"] == 8
    assert flags == {"retrieval": True} and answer.status_code == 200
    records = [json.loads(x) for x in (lab.dir / "audit.jsonl").read_text().splitlines()]
    assert {r["runbook"] for r in records if r["event"] == "run-end"} >= made_for_lab


BROKEN = {
    "moved-endpoint": """\
id: moved-endpoint
title: Calls an admin endpoint that has moved
targets: [lab]
params:
  url: {type: url, target: api_url}
steps:
  - name: shrink the pool
    http: {url: "{{url}}/admin/serving-v1", json: {admission: api_workers, max_concurrency: 4}}
verify:
  name: limit in force
  promql: infersight_workers_limit{name="api_workers"} == 4
  within: 10s
""",
    "gone-binary": """\
id: gone-binary
title: Needs a tool nobody installed
targets: [lab]
steps:
  - name: run the tool
    command: {argv: [infersight-failover-tool-v0, --now]}
verify:
  name: anything
  promql: up == 1
  within: 10s
""",
    "never-true": """\
id: never-true
title: Checks a state the gateway never reports
targets: [lab]
params:
  stats_url: {type: url, target: gateway_stats_url}
steps:
  - name: drain replica-1
    http:
      url: "{{stats_url}}"
      form: {s: replica-1, action: drain, b: llm}
      expect: [303]
      expect_headers: {location: "st=DONE"}
verify:
  name: a state HAProxy has no name for
  promql: haproxy_server_status{server="replica-1",state="DRAINING"} == 1
  within: 8s
rollback:
  - name: ready again
    http:
      url: "{{stats_url}}"
      form: {s: replica-1, action: ready, b: llm}
      expect: [303]
      expect_headers: {location: "st=DONE"}
""",
}


def test_deliberately_broken_runbooks_are_reported_broken(lab: stack.Lab, tmp_path: Path) -> None:
    for rid, text in BROKEN.items():
        (tmp_path / f"{rid}.yaml").write_text(text)
    code, results, err = _drill(lab, "--dir", str(tmp_path), *BROKEN)
    assert code == 1, err
    why = {r["runbook"]: (r["verdict"], r["reason"]) for r in results}
    assert why["moved-endpoint"][0] == "broken" and "HTTP 404" in why["moved-endpoint"][1]
    assert why["gone-binary"][0] == "broken"
    assert "missing binary: infersight-failover-tool-v0" in why["gone-binary"][1]
    assert why["never-true"][0] == "broken" and "did not hold within 8 s" in why["never-true"][1]
    run = next(r for r in results if r["runbook"] == "never-true")["run"]
    assert run["rollback"] and run["rollback"][0]["ok"]  # the drain was undone
    up = 'haproxy_server_status{proxy="llm",server="replica-1",state="UP"} == 1'
    assert _until(lambda: bool(_query(lab, up)))
