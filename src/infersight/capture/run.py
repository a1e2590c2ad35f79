"""One capture: metrics, baselines, thread stacks, logs, GPU and host facts, and the diagnosis,
into one evidence bundle (seed §2.3: freeze the scene before anyone restarts anything)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from infersight.capture.gpu import capture_gpu
from infersight.capture.host import capture_host
from infersight.capture.logs import DEFAULT_MAX_BYTES, capture_logs
from infersight.capture.metrics import Pulled, diagnose_moment, empty_window, pull_all
from infersight.capture.parts import Part, PartOutput, PartResult, run_parts
from infersight.capture.stacks import capture_stacks, resolve
from infersight.diagnose import Diagnosis, KnowledgeBase, Topology
from infersight.frame import MetricFrame
from infersight.limits import Limits
from infersight.redact import Redactor
from infersight.report import render_json
from infersight.report.timeline_marks import ALERT_KEY
from infersight.sources.connect import ConnectionSettings
from infersight.timeparse import iso, promql_duration
from infersight.windows import DEFAULT_BASELINES, INCIDENT

CAPTURE_ARTIFACT = "capture.json"
DIAGNOSIS_ARTIFACT = "diagnosis.json"


@dataclass(frozen=True)
class CaptureRequest:
    """What to capture. Each part is optional: no server, no pids, no logs, no --gpu."""

    out: Path
    connection: ConnectionSettings | None = None
    at: float = field(default_factory=time.time)  # the moment diagnosed (an alert's arrival)
    end: float | None = None  # where the window ends (default: at)
    since_s: float = 1800.0
    step_s: float = 15.0
    baselines: tuple[float, ...] = DEFAULT_BASELINES
    rate_window: str = "5m"
    pids: tuple[int, ...] = ()
    processes: tuple[str, ...] = ()
    native: bool = True
    logs: tuple[Path, ...] = ()
    log_max_bytes: int = DEFAULT_MAX_BYTES
    gpu: bool = False
    scope: dict[str, str] = field(default_factory=dict)  # the alert's labels
    #: the alert's startsAt, kept in the source (the HTML timeline marks it)
    alert_starts_at: float | None = None
    part_timeout_s: float = 60.0
    metrics_timeout_s: float = 120.0
    overwrite: bool = False
    limits: Limits | None = None
    #: request-path edges a user declared (`diagnose/path/topology.py`)
    topology: Topology | None = None


@dataclass(frozen=True)
class CaptureResult:
    path: Path
    diagnosis: Diagnosis
    parts: tuple[PartResult, ...]
    windows: dict[str, MetricFrame]

    @property
    def failed(self) -> list[PartResult]:
        return [p for p in self.parts if p.status not in ("ok", "skipped")]

    def to_dict(self) -> dict[str, Any]:
        return {
            "bundle": str(self.path),
            "healthy": self.diagnosis.healthy,
            "judged": self.diagnosis.judged,
            "summary": self.diagnosis.summary,
            "root_causes": [r.hypothesis for r in self.diagnosis.root_causes],
            "parts": [p.to_dict() for p in self.parts],
        }


Progress = Callable[[str, str], None]


def _redactor(req: CaptureRequest) -> Redactor:
    """Knows the connection's credentials, those read from files included, before any part
    runs: a log line echoing a token read from --bearer-token-file is scrubbed too."""
    return Redactor(req.connection.secrets() if req.connection is not None else ())


def scrub_artifacts(artifacts: dict[str, bytes], redactor: Redactor) -> dict[str, bytes]:
    """Artifacts with credentials masked (a token in a command line, a log line); a JSON one
    stays JSON: its strings are scrubbed, its numbers and structure kept."""
    out = {}
    for name, data in artifacts.items():
        text = data.decode("utf-8", "replace")
        try:
            doc = json.loads(text) if name.endswith(".json") else None
        except ValueError:  # a part's .json that is not JSON: scrubbed as the text it is
            doc = None
        if doc is None:
            out[name] = redactor.scrub(text).encode("utf-8")
        else:
            doc = redactor.scrub_data(doc)
            out[name] = (json.dumps(doc, indent=2, ensure_ascii=False) + "\n").encode("utf-8")
    return out


def capture(
    req: CaptureRequest,
    kb: KnowledgeBase | None = None,
    progress: Progress | None = None,
    metrics_progress: Callable[[int, int], None] | None = None,
) -> CaptureResult:
    """Run every requested part (each bounded in time), diagnose, write the bundle."""
    from infersight.bundle import check_target, write_bundle
    from infersight.exporters import load_catalog

    check_target(req.out, req.overwrite)  # before any work: a bad -o fails at once
    redactor = _redactor(req)
    end = req.at if req.end is None else req.end
    pulled = Pulled()
    parts: list[Part] = []
    conn = req.connection
    if conn is not None:

        def metrics() -> PartOutput:
            limits = req.limits or Limits()
            settings = conn.model_copy(update={"deadline": req.metrics_timeout_s})
            client = settings.client(limits)
            note = pull_all(
                client, load_catalog(), end, req.since_s, req.step_s, req.baselines,
                req.rate_window, pulled, metrics_progress,
            )  # fmt: skip
            if pulled.errors:
                return PartOutput({}, "; ".join([note, *pulled.errors]), partial=True)
            return PartOutput({}, note)

        parts.append(Part("metrics", metrics, req.metrics_timeout_s + 5.0))
    if req.pids or req.processes:
        targets, problems = resolve(list(req.pids), list(req.processes))
        parts.append(
            Part(
                "stacks", lambda: capture_stacks(targets, problems, req.native), req.part_timeout_s
            )
        )
    if req.logs:
        logs = list(req.logs)
        parts.append(
            Part("logs", lambda: capture_logs(logs, req.log_max_bytes), req.part_timeout_s)
        )
    if req.gpu:
        parts.append(Part("gpu", capture_gpu, req.part_timeout_s))
    parts.append(Part("host", lambda: capture_host(list(req.logs)), req.part_timeout_s))
    results, artifacts = run_parts(parts, redactor, progress)

    windows = dict(pulled.windows)
    if INCIDENT not in windows:
        windows = {INCIDENT: empty_window(end, req.since_s, req.step_s)}
    source = {
        "kind": "capture",
        "at": iso(req.at),
        "window": promql_duration(req.since_s),
        "rate_window": req.rate_window,
    }
    if end != req.at:
        source["end"] = iso(end)
    if conn is not None:
        source["url"] = conn.shown_url()
        if conn.tenant:
            source["tenant"] = conn.tenant
    if req.scope:
        source["scope"] = json.dumps(req.scope, sort_keys=True)
    if req.topology:
        source["path_file"] = req.topology.source
    if req.alert_starts_at is not None:
        source[ALERT_KEY] = iso(req.alert_starts_at)
    if pulled.families:
        source["families"] = ",".join(pulled.families)
    diag_box: list[Diagnosis] = []

    def run_diagnosis() -> PartOutput:
        d = diagnose_moment(
            windows,
            pulled.missing,
            req.at,
            source,
            kb,
            pulled.runs.get(INCIDENT, ()),
            req.topology,
        )
        diag_box.append(d)
        roots = ", ".join(r.hypothesis for r in d.root_causes) or "none"
        return PartOutput(
            {DIAGNOSIS_ARTIFACT: render_json(d).encode("utf-8")}, f"root causes: {roots}"
        )

    diag_results, diag_artifacts = run_parts(
        [Part("diagnosis", run_diagnosis, req.part_timeout_s)], redactor, progress
    )
    results += diag_results
    artifacts.update(diag_artifacts)
    if diag_box:
        diagnosis = diag_box[0]
    else:
        from infersight import coverage

        cov = coverage.assess(windows, pulled.missing, req.at)
        diagnosis = coverage.unjudged(windows, cov, pulled.missing, source)
        diagnosis = replace(diagnosis, queries_run=pulled.runs.get(INCIDENT, ()))
    record = {
        "at": iso(req.at),
        "window_s": req.since_s,
        "scope": req.scope,
        "parts": [r.to_dict() for r in results],
    }
    artifacts[CAPTURE_ARTIFACT] = json.dumps(record, indent=2, sort_keys=True).encode()
    failed = [r for r in results if r.status not in ("ok", "skipped")]
    if failed:
        source["capture_failed"] = ",".join(r.name for r in failed)
    notes = "capture: " + "; ".join(
        f"{r.name} {r.status}" + (f" ({r.note})" if r.note and r.status != "ok" else "")
        for r in results
    )
    path = write_bundle(
        req.out,
        windows,
        source,
        missing=pulled.missing,
        artifacts=scrub_artifacts(artifacts, redactor),
        notes=redactor.scrub(notes),
        overwrite=req.overwrite,
        queries=pulled.runs,
    )
    return CaptureResult(path, diagnosis, tuple(results), windows)
