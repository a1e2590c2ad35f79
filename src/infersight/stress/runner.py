"""`stress run`: a profile run with Locust in a child process; per step throughput, P50, P99,
P99.9, errors and SLO verdicts; the saturation point (the first step that breaks the SLO).
With `--lab DIR` the profile's fault is injected into that live lab during its step, and with
`--prometheus URL` `diagnose` runs on the run's window and its answer is stored in the results.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from infersight.lab.live.load import check_loopback
from infersight.redact import redact_argv
from infersight.stress.profiles import Step, steps

SCHEMA = "infersight.stress.run/1"
MAX_USERS = 200
MAX_DURATION_S = 3 * 3600.0


@dataclass(frozen=True)
class Slo:
    p99_s: float = 1.0
    error_ratio: float = 0.01


def quantile(values: list[float], q: float) -> float | None:
    return float(np.quantile(np.asarray(values), q)) if values else None


def summarize(step: Step, ok: list[float], failed: list[float], slo: Slo) -> dict[str, Any]:
    n = len(ok) + len(failed)
    all_lat = ok + failed
    err = len(failed) / n if n else 0.0
    p99 = quantile(all_lat, 0.99)
    return {
        **step.to_dict(),
        "requests": n,
        "throughput": len(ok) / step.seconds,
        "offered": step.users,  # paced users: one request per second each
        "p50_s": quantile(all_lat, 0.5),
        "p99_s": p99,
        "p999_s": quantile(all_lat, 0.999),
        "errors": len(failed),
        "error_ratio": err,
        "slo_ok": n > 0 and err <= slo.error_ratio and (p99 or 0.0) <= slo.p99_s,
    }


def _start_locust(
    url: str, plan: list[Step], workdir: Path
) -> tuple[subprocess.Popen[bytes], float]:
    """Locust in a child process running the whole plan; (the process, its time bound)."""
    max_s = sum(s.seconds for s in plan) + 30
    spec = {
        "url": url,
        "path": "/v1/answer",
        "steps": [{"name": s.name, "seconds": s.seconds, "users": s.users} for s in plan],
        "max_seconds": max_s,
    }
    (workdir / "spec.json").write_text(json.dumps(spec))
    cmd = [
        sys.executable,
        "-m",
        "infersight.stress.locust_main",
        str(workdir / "spec.json"),
        str(workdir / "out.json"),
    ]
    with open(workdir / "locust.log", "wb") as log:
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=log)
    return proc, max_s + 30


def _wait_locust(
    proc: subprocess.Popen[bytes], workdir: Path, timeout: float
) -> list[dict[str, list[float]]]:
    out_path = workdir / "out.json"
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        raise RuntimeError("the Locust process overran its time bound and was killed") from None
    if proc.returncode != 0 or not out_path.exists():
        tail = (workdir / "locust.log").read_text(errors="replace")[-600:]
        raise RuntimeError(f"Locust failed (exit {proc.returncode}): {tail}")
    data: list[dict[str, list[float]]] = json.loads(out_path.read_text())["steps"]
    return data


def check(url: str, profile: str, users: int, duration_s: float) -> list[Step]:
    """The run's steps; ValueError (one line) for a target or a plan that cannot be run."""
    check_loopback(url)
    if users > MAX_USERS or duration_s > MAX_DURATION_S:
        raise ValueError(f"--users at most {MAX_USERS} and --duration at most 3h")
    return steps(profile, users, duration_s)


def failed(result: dict[str, Any]) -> str | None:
    """Why the run is a finding (exit 1): the SLO broken, or no request answered; else None."""
    total = result["total"]
    if total["requests"] and total["errors"] == total["requests"]:
        return f"every request failed ({total['errors']:,} of {total['requests']:,})"
    if total["requests"] == 0:
        return "no request was sent"
    if not result["slo_ok"]:
        return f"SLO broken from step {result['saturation_step']}"
    return None


def run(
    url: str,
    profile: str,
    users: int,
    duration_s: float,
    slo: Slo = Slo(),
    lab_dir: Path | None = None,
    prometheus: str | None = None,
) -> dict[str, Any]:
    """Run `profile` against `url` (loopback only); the results as one JSON-able dict."""
    plan = check(url, profile, users, duration_s)
    started = time.time()
    with tempfile.TemporaryDirectory(prefix="infersight-stress-") as tmp:
        workdir = Path(tmp)
        if lab_dir is not None and any(s.fault for s in plan):
            raw = _run_with_faults(url, plan, workdir, lab_dir)
        else:
            proc, bound = _start_locust(url, plan, workdir)
            raw = _wait_locust(proc, workdir, bound)
    ended = time.time()
    rows = [
        {**summarize(s, r["ok"], r["failed"], slo), "error_kinds": r.get("error_kinds", {})}
        for s, r in zip(plan, raw, strict=True)
    ]
    ok_all = [x for r in raw for x in r["ok"]]
    failed_all = [x for r in raw for x in r["failed"]]
    total = summarize(Step("total", ended - started, users), ok_all, failed_all, slo)
    saturation = next((r["name"] for r in rows if not r["slo_ok"]), None)
    result: dict[str, Any] = {
        "schema": SCHEMA,
        "url": url,
        "profile": profile,
        "users": users,
        "duration_s": duration_s,
        "start": started,
        "end": ended,
        "slo": {"p99_s": slo.p99_s, "error_ratio": slo.error_ratio},
        "steps": rows,
        "total": total,
        "saturation_step": saturation,
        "slo_ok": saturation is None,
        "load_model": "paced users (one request per second each; open loop while requests "
        "take under a second), Locust as a library in a child process",
    }
    if prometheus:
        result["diagnosis"] = diagnose_window(prometheus, started, ended)
    return result


def _run_with_faults(
    url: str, plan: list[Step], workdir: Path, lab_dir: Path
) -> list[dict[str, list[float]]]:
    """Locust runs the whole plan; the harness injects each step's fault as the step begins
    and clears it when the step ends."""
    from infersight.lab.live import faults
    from infersight.lab.live.stack import Lab

    proc, bound = _start_locust(url, plan, workdir)
    t0 = time.monotonic()
    try:
        elapsed = 0.0
        for s in plan:
            if s.fault:
                time.sleep(max(0.0, t0 + elapsed - time.monotonic()))
                faults.inject(Lab.load(lab_dir), s.fault, replica=0)
                time.sleep(max(0.0, t0 + elapsed + s.seconds - time.monotonic()))
                faults.clear(Lab.load(lab_dir))
            elapsed += s.seconds
    except BaseException:
        proc.kill()
        proc.wait()
        faults.clear(Lab.load(lab_dir))
        raise
    return _wait_locust(proc, workdir, bound)


def diagnose_window(prometheus: str, start: float, end: float) -> dict[str, Any]:
    """`infersight diagnose` on the run's window; its root causes (or why none)."""
    window = max(300, int(end - start) + 60)
    cmd = [
        str(Path(sys.executable).with_name("infersight")),
        "diagnose",
        "-p",
        prometheus,
        "--at",
        str(int(end)),
        "--window",
        f"{window}s",
        "--format",
        "json",
    ]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=300, check=False)
    shown = shlex.join(redact_argv(cmd))  # the URL may carry user:password
    try:
        d = json.loads(out.stdout)
    except ValueError:
        return {"command": shown, "error": out.stderr.strip()[-300:]}
    roots = []
    for rc in d.get("root_causes", []):
        h = rc.get("hypothesis")
        roots.append(h.get("id") if isinstance(h, dict) else h)
    return {
        "command": shown,
        "healthy": d.get("healthy"),
        "roots": roots,
        "summary": d.get("summary"),
    }
