"""How `infersight runbook` prints: a run's report, and a remedy's runbooks one per stack."""

from __future__ import annotations

from typing import Any

from infersight.cli.common import console, markup_safe, print_json


def show_ways(remedy: str, ways: Any, as_json: bool) -> None:
    """A remedy's runbooks, one per stack, and how to pick one."""
    rows = [{"id": b.id, "stack": b.stack, "title": b.title} for b in ways]
    if as_json:
        print_json({"remedy": remedy, "runbooks": rows})
        return
    console.print(f"[bold]{markup_safe(remedy)}[/]: one runbook per stack", highlight=False)
    for r in rows:
        stack = " + ".join(r["stack"]) or "any"
        console.print(f"  {markup_safe(r['id'])} ({stack}): {markup_safe(r['title'])}")
    console.print("pick one with --stack PARTS, or -p URL to detect the stack", highlight=False)


def print_report(report: Any) -> None:
    dry = report.mode == "dry-run"
    head = "dry run (nothing runs; add --execute)" if dry else f"run {report.run_id}"
    console.print(f"[bold]{markup_safe(report.runbook)}[/]: {head}", highlight=False)
    if report.stack:
        console.print(markup_safe(report.stack), highlight=False, soft_wrap=True)
    if report.params:
        shown = ", ".join(f"{k}={v}" for k, v in report.params.items())
        console.print(f"parameters: {markup_safe(shown)}", highlight=False, soft_wrap=True)
    for m in report.missing:
        console.print(f"[red]missing binary[/]: {markup_safe(m)}", highlight=False)
    for c in report.preconditions:
        color = {"holds": "green", "fails": "red", "unknown": "yellow"}[c.verdict]
        asked = f": {markup_safe(c.command)}" if c.command else ""
        console.print(
            f"precondition {markup_safe(c.name)}: [{color}]{c.verdict}[/] "
            f"({markup_safe(c.detail)}){asked}",
            highlight=False,
            soft_wrap=True,
        )
    if dry:
        for p in report.plan:
            label = "would run" if p.phase == "step" else "on failure"
            console.print(
                f"{label} ({p.kind}) {markup_safe(p.name)}: {markup_safe(p.what)}",
                highlight=False,
                soft_wrap=True,
            )
        if report.verify is not None:
            v = report.verify
            console.print(
                f"verification now: {v.verdict} ({markup_safe(v.detail)}): {markup_safe(v.promql)}",
                highlight=False,
                soft_wrap=True,
            )
        if report.outcome == "refused":
            console.print(
                f"[red]a real run would be refused[/]: {markup_safe(report.reason)}",
                highlight=False,
                soft_wrap=True,
            )
        return
    for phase, results in (("step", report.steps), ("rollback", report.rollback)):
        for r in results:
            mark = "[green]ok[/]" if r.ok else f"[red]failed[/]: {markup_safe(r.detail)}"
            console.print(
                f"{phase} {markup_safe(r.name)}: {mark} ({r.seconds:.2f} s)",
                highlight=False,
                soft_wrap=True,
            )
    if report.verify is not None:
        console.print(
            f"verification: {report.verify.verdict} after {report.verify_tries} checks "
            f"({markup_safe(report.verify.detail)})",
            highlight=False,
            soft_wrap=True,
        )
    color = "green" if report.outcome == "ok" else "red"
    reason = f": {markup_safe(report.reason)}" if report.reason else ""
    console.print(f"outcome: [{color}]{report.outcome}[/]{reason}", highlight=False, soft_wrap=True)
