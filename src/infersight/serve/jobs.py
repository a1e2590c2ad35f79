"""What `infersight serve` does for each new firing group: capture with the alert's labels as
scope, at the moment it arrived and over a window reaching back past its startsAt
(`moment.alert_window`), write the reports beside the bundle, post a summary."""

from __future__ import annotations

import logging
from pathlib import Path

import httpx

from infersight.capture import CaptureRequest, capture
from infersight.diagnose import Diagnosis, KnowledgeBase, Topology, load_kb
from infersight.redact import Redactor
from infersight.report import write_report
from infersight.report.seen_before import PastIncident
from infersight.report.textsafe import for_slack
from infersight.safe_write import check_folder
from infersight.serve.config import ServeConfig
from infersight.serve.dispatch import Job, Outcome, Runner
from infersight.serve.moment import alert_window

log = logging.getLogger("infersight.serve")
REPORTS = {"md": "report.md", "html": "report.html", "json": "report.json"}
BUNDLE = "bundle.tar.gz"


def capture_request(
    cfg: ServeConfig, job: Job, folder: Path, topology: Topology | None = None
) -> CaptureRequest:
    """The capture of one firing group: diagnosed when its notification arrived, over the
    configured window or longer, reaching back past its startsAt (`moment.alert_window`)."""
    c = cfg.capture
    w = alert_window(job.starts_at, job.received_at, c.since, c.alert)
    return CaptureRequest(
        out=folder / BUNDLE,
        connection=cfg.prometheus,
        at=w.at,
        end=w.at,
        since_s=w.span_s,
        step_s=c.step,
        baselines=tuple(c.baselines),
        pids=tuple(c.pids),
        processes=tuple(c.processes),
        logs=tuple(c.logs),
        log_max_bytes=c.log_bytes,
        gpu=c.gpu,
        scope=job.scope,
        alert_starts_at=job.starts_at,
        part_timeout_s=c.part_timeout,
        metrics_timeout_s=c.metrics_timeout,
        # the folder is this job's alone: a bundle there is from a run that a stop cut short
        # before its reports, and this run of the job replaces it
        overwrite=True,
        topology=topology,
    )


def summary_text(job: Job, outcome: Outcome, base_url: str = "") -> str:
    """The short message for a Slack-compatible webhook, escaped as Slack's formatting asks:
    an alert's labels are data, never a mention or a link."""
    roots = ", ".join(outcome.root_causes) or "no root cause named"
    link = f" {base_url.rstrip('/')}/captures/{job.id}/report.html" if base_url else ""
    return for_slack(f"[infersight] {job.notification.name()}: {roots}. {outcome.summary}{link}")


def post_summary(cfg: ServeConfig, text: str, redactor: Redactor) -> None:
    if cfg.slack is None:
        return
    url = cfg.slack.webhook_url.get_secret_value()
    try:
        r = httpx.post(url, json={"text": text}, timeout=cfg.slack.timeout)
        if r.status_code >= 300:
            log.warning("slack webhook answered HTTP %s", r.status_code)
    except httpx.HTTPError as exc:
        log.warning("slack webhook failed: %s", redactor.scrub(str(exc)))


def history(cfg: ServeConfig, diagnosis: Diagnosis) -> tuple[PastIncident, ...] | None:
    """The past incidents like this one in the configured postmortem library; a library that
    cannot be read is logged and the reports go without it (the capture matters more)."""
    if cfg.history is None or not diagnosis.judged:
        return None
    from infersight.postmortem import LibraryError, seen_before

    try:
        seen, problems = seen_before(diagnosis, cfg.history)
    except LibraryError as exc:
        log.warning("history not searched: %s", exc)
        return None
    for p in problems:
        log.warning("history: skipped %s", p)
    return seen


def capture_runner(cfg: ServeConfig, kb: KnowledgeBase | None = None, base_url: str = "") -> Runner:
    """The runner that captures and reports for real."""
    knowledge = kb or load_kb()
    topology = cfg.topology()
    redactor = Redactor(cfg.secrets())

    def run(job: Job) -> Outcome:
        folder = check_folder(cfg.out_dir / job.id, create=True)
        result = capture(capture_request(cfg, job, folder, topology), knowledge)
        seen = history(cfg, result.diagnosis)
        # the reports kept beside the bundle are the record, not the first screen: in full
        reports = {
            fmt: write_report(
                result.diagnosis, folder / name, fmt, result.windows, full=True, seen=seen
            )
            for fmt, name in REPORTS.items()
        }
        outcome = Outcome(
            result.path,
            reports,
            [r.hypothesis for r in result.diagnosis.root_causes],
            result.diagnosis.summary,
            [p.name for p in result.failed],
        )
        post_summary(cfg, summary_text(job, outcome, base_url), redactor)
        return outcome

    return run
