"""Drills: run runbooks for real against a rehearsal target and say which are broken (seed
§6.2: "drill them, so that on the night they still run"). A drill is a real run with every
check, then the rollback steps to leave the target as it was; it is broken when a binary is
missing, a step fails (an endpoint that moved), a check never turns true, or the restore fails.

The target is the live lab (`infersight lab up`), whose recorded ports fill each parameter
that names a target fact, or a URL (a staging service) with `--param` for the rest.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from infersight.runbooks.audit import AuditLog
from infersight.runbooks.checks import Checker
from infersight.runbooks.config import DEFAULT_CONFIG, RunbookConfig
from infersight.runbooks.executor import Runner, RunReport
from infersight.runbooks.model import Runbook
from infersight.runbooks.params import ParamError, resolve

#: what a rehearsal target may tell a runbook (a parameter's `target:` names one)
TARGET_FACTS = {
    "gateway_url": "the gateway's URL (where clients send requests)",
    "gateway_stats_url": "HAProxy's stats page with the admin form",
    "gateway_backend": "the gateway backend of the model pool",
    "primary_server": "the model pool's first server",
    "standby_server": "another server of the model pool",
    "api_url": "the API service's URL (serving library, admin endpoint)",
    "api_job": "the Prometheus job that scrapes the API",
    "replica_url": "a serving replica's URL (serving library, admin endpoint)",
    "replica_job": "the Prometheus job that scrapes the replicas",
    "replica_instance": "that replica's Prometheus instance label",
    "flags_url": 'a feature-flag service (PUT /flags/NAME {"enabled": false})',
    "degradable_feature": "a non-core feature that may be switched off",
    "redis_host": "the cache's host",
    "redis_port": "the cache's port",
}

Verdict = Literal["works", "broken", "skipped"]


class DrillError(ValueError):
    """The rehearsal target cannot be used."""


@dataclass(frozen=True)
class Target:
    kind: Literal["lab", "url"]
    label: str
    facts: dict[str, str]
    prometheus: str | None


def lab_target(lab_dir: Path) -> Target:
    """The live lab recorded in `lab_dir`."""
    from infersight.lab.live.procs import LabError
    from infersight.lab.live.stack import Lab

    try:
        lab = Lab.load(lab_dir)
    except LabError as exc:
        raise DrillError(str(exc)) from None
    p = lab.ports
    facts = {
        "gateway_url": lab.gateway_url,
        "gateway_stats_url": f"http://127.0.0.1:{p['haproxy_metrics']}/stats",
        "gateway_backend": "llm",
        "primary_server": "replica-0",
        "api_url": f"http://127.0.0.1:{p['api']}",
        "api_job": "api",
        "flags_url": f"http://127.0.0.1:{p['api']}/admin",
        "degradable_feature": "retrieval",
        "replica_url": f"http://127.0.0.1:{p['gpu-0']}",
        "replica_job": "vllm",
        "replica_instance": f"127.0.0.1:{p['gpu-0']}",
        "redis_host": "127.0.0.1",
        "redis_port": str(p["redis"]),
    }
    if lab.replicas >= 2:
        facts["standby_server"] = "replica-1"
    return Target("lab", str(lab_dir), facts, lab.prometheus_url)


def url_target(url: str, prometheus: str | None) -> Target:
    """A service at `url`: it is the gateway and the API; everything else comes by --param."""
    base = url.rstrip("/")
    return Target("url", url, {"gateway_url": base, "api_url": base}, prometheus)


@dataclass(frozen=True)
class DrillResult:
    runbook: str
    verdict: Verdict
    reason: str
    report: RunReport | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "runbook": self.runbook,
            "verdict": self.verdict,
            "reason": self.reason,
            "run": self.report.to_dict() if self.report else None,
        }


def applies(book: Runbook, target: Target) -> str | None:
    """Why `book` does not apply to `target` (None: it does)."""
    if target.kind not in book.targets and "any" not in book.targets:
        return f"made for {', '.join(book.targets)}, not a {target.kind}"
    return None


def drill_one(
    book: Runbook,
    target: Target,
    given: dict[str, str],
    audit: AuditLog,
    env: dict[str, str],
    config: RunbookConfig = DEFAULT_CONFIG,
    progress: Callable[[str], None] = lambda _m: None,
) -> DrillResult:
    why = applies(book, target)
    if why is not None:
        return DrillResult(book.id, "skipped", why)
    values: dict[str, Any] = {}
    for name, p in book.params.items():
        if name in given:
            values[name] = given[name]
        elif p.target and p.target in target.facts:
            values[name] = target.facts[p.target]
    try:
        resolved = resolve(book.params, values, env, config.max_param_chars)
    except ParamError as exc:
        return DrillResult(book.id, "skipped", f"not enough to run it here: {exc}")
    checker = Checker(target.prometheus, config.prometheus_timeout_s)
    runner = Runner(book, resolved, checker, config, progress)
    report = runner.execute(audit, restore=True, purpose=f"drill against {target.label}")
    if report.outcome == "ok":
        restored = " and restored" if report.restore else ""
        n = report.verify_tries
        tries = f" ({n} check{'s' if n != 1 else ''})" if report.verify else ""
        return DrillResult(book.id, "works", f"ran, verified{tries}{restored}", report)
    return DrillResult(book.id, "broken", report.reason, report)


def drill(
    books: list[Runbook],
    target: Target,
    given: dict[str, str],
    audit: AuditLog,
    env: dict[str, str],
    config: RunbookConfig = DEFAULT_CONFIG,
    progress: Callable[[str], None] = lambda _m: None,
) -> list[DrillResult]:
    """Each runbook in turn (one at a time: they may touch the same parts)."""
    out = []
    for book in books:
        progress(f"drilling {book.id}")
        out.append(drill_one(book, target, given, audit, env, config, progress))
    return out
