"""`infersight runbook list|show|run|drill`: runbooks that run (seed §6.2). A dry run by
default; `--execute` asks first (unless `--yes`), logs every step to the audit log, verifies,
and rolls back when a step or the verification fails."""

from __future__ import annotations

import dataclasses
import os
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from infersight.cli.common import (
    EXIT_FINDINGS,
    EXIT_USAGE,
    FormatOpt,
    JsonAliasOpt,
    console,
    err_console,
    fail,
    markup_safe,
    print_json,
    wants_json,
)
from infersight.cli.live_cmds import DEFAULT_DIR as LAB_DIR

app = typer.Typer(
    help="Runbooks that run: one command per remedy, a dry run first, verified, audited, "
    "drilled.\n\n"
    "  infersight runbook list\n"
    "  infersight runbook show cache-resize\n"
    "  infersight runbook run cache-resize --param port=6379 --param maxmemory_mb=512 "
    "-p http://prom:9090\n"
    "  infersight runbook run cache-resize --param port=6379 --execute -p http://prom:9090\n"
    "  infersight lab up && infersight runbook drill",
    no_args_is_help=True,
)

DirOpt = Annotated[
    list[Path] | None,
    typer.Option("--dir", help="A folder of your own runbooks (*.yaml); repeatable."),
]
ParamOpt = Annotated[
    list[str] | None,
    typer.Option("--param", "-P", help="NAME=VALUE for a parameter; repeatable."),
]
PromOpt = Annotated[
    str | None,
    typer.Option("--prometheus", "-p", help="Prometheus URL for the preconditions and checks."),
]
AuditOpt = Annotated[
    Path | None,
    typer.Option(
        "--audit",
        help="The audit log (JSONL, appended). Default: $INFERSIGHT_RUNBOOK_AUDIT or "
        "~/.local/state/infersight/runbook-audit.jsonl.",
    ),
]


def _library(dirs: list[Path] | None) -> Any:
    from infersight.runbooks import RunbookError, load_library

    try:
        return load_library(dirs or [])
    except RunbookError as exc:
        fail(str(exc))


def _book(lib: Any, rid: str) -> Any:
    book = lib.get(rid)
    if book is None:
        fail(f"no runbook {rid!r}; `infersight runbook list` shows them", EXIT_USAGE)
    return book


@app.command("list")
def list_cmd(dirs: DirOpt = None, fmt: FormatOpt = "table", as_json: JsonAliasOpt = False) -> None:
    """Every runbook: id, what it does, where it runs, what its steps are.

    Example: infersight runbook list --dir ./my-runbooks
    """
    lib = _library(dirs)
    rows = [
        {
            "id": b.id,
            "title": b.title,
            "targets": b.targets,
            "steps": [s.kind for s in b.steps],
            "verified": b.verify is not None,
            "rollback": len(b.rollback),
            "file": lib.origins[b.id],
        }
        for b in lib.books
    ]
    if wants_json(fmt, as_json):
        print_json(rows)
        return
    table = Table("id", "title", "targets", "steps", "verify", "rollback")
    for r in rows:
        table.add_row(
            markup_safe(r["id"]),
            markup_safe(r["title"]),
            ",".join(r["targets"]),
            ",".join(r["steps"]),
            "yes" if r["verified"] else "-",
            str(r["rollback"]) if r["rollback"] else "-",
        )
    console.print(table)


@app.command("show")
def show(
    rid: Annotated[str, typer.Argument(metavar="ID", help="The runbook's id.")],
    dirs: DirOpt = None,
    fmt: FormatOpt = "table",
    as_json: JsonAliasOpt = False,
) -> None:
    """A runbook in full: parameters, preconditions, steps, verification, rollback.

    Example: infersight runbook show gateway-failover
    """
    lib = _library(dirs)
    book = _book(lib, rid)
    if wants_json(fmt, as_json):
        print_json({**book.model_dump(by_alias=True, exclude_none=True), "file": lib.origins[rid]})
        return
    out = [f"[bold]{markup_safe(book.id)}[/]: {markup_safe(book.title)}  ({lib.origins[rid]})"]
    if book.description:
        out.append(markup_safe(book.description.strip()))
    out.append(f"targets: {', '.join(book.targets)}")
    out.append("[bold]parameters[/]")
    for name, p in book.params.items():
        bits = [p.type]
        if p.default is not None:
            bits.append(f"default {p.default}")
        if p.min is not None or p.max is not None:
            bits.append(
                f"{p.min if p.min is not None else ''}..{p.max if p.max is not None else ''}"
            )
        if p.env:
            bits.append(f"from ${p.env}")
        out.append(f"  {name} ({', '.join(bits)}): {markup_safe(p.description)}")
    for title, checks in (("preconditions", book.preconditions),):
        if checks:
            out.append(f"[bold]{title}[/]")
            out += [f"  {markup_safe(c.name)}: {markup_safe(c.promql)}" for c in checks]
    for title, steps in (("steps", book.steps), ("rollback", book.rollback)):
        if steps:
            out.append(f"[bold]{title}[/]")
            out += [
                f"  {i}. {markup_safe(s.name)} ({s.kind}): {markup_safe(s.describe())}"
                for i, s in enumerate(steps, 1)
            ]
    if book.verify:
        v = book.verify
        out.append(f"[bold]verify[/] within {v.within}: {markup_safe(v.promql.strip())}")
    console.print("\n".join(out), highlight=False, soft_wrap=True)


def _resolve(book: Any, params: list[str] | None, dry: bool) -> dict[str, Any]:
    from infersight.runbooks.config import DEFAULT_CONFIG
    from infersight.runbooks.params import ParamError, parse_assignments, resolve

    try:
        given = parse_assignments(params or [])
        return resolve(book.params, given, dict(os.environ), DEFAULT_CONFIG.max_param_chars, dry)
    except ParamError as exc:
        fail(str(exc), EXIT_USAGE)


def _audit(path: Path | None) -> Any:
    from infersight.runbooks.audit import AuditError, AuditLog, default_path

    try:
        return AuditLog(path.expanduser() if path else default_path())
    except AuditError as exc:
        fail(str(exc))


def _print_report(report: Any) -> None:
    dry = report.mode == "dry-run"
    head = "dry run (nothing runs; add --execute)" if dry else f"run {report.run_id}"
    console.print(f"[bold]{markup_safe(report.runbook)}[/]: {head}", highlight=False)
    if report.params:
        shown = ", ".join(f"{k}={v}" for k, v in report.params.items())
        console.print(f"parameters: {markup_safe(shown)}", highlight=False, soft_wrap=True)
    for m in report.missing:
        console.print(f"[red]missing binary[/]: {markup_safe(m)}", highlight=False)
    for c in report.preconditions:
        color = {"holds": "green", "fails": "red", "unknown": "yellow"}[c.verdict]
        console.print(
            f"precondition {markup_safe(c.name)}: [{color}]{c.verdict}[/] "
            f"({markup_safe(c.detail)})",
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


@app.command("run")
def run(
    rid: Annotated[str, typer.Argument(metavar="ID", help="The runbook's id.")],
    params: ParamOpt = None,
    execute: Annotated[
        bool, typer.Option("--execute", help="Run it for real (default: a dry run).")
    ] = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask before executing.")] = False,
    prometheus: PromOpt = None,
    audit: AuditOpt = None,
    dirs: DirOpt = None,
    fmt: FormatOpt = "table",
    as_json: JsonAliasOpt = False,
) -> None:
    """Dry run a runbook (what would run, parameters filled, checks evaluated now), or run it
    with --execute: preconditions, steps, verification, rollback on failure; every step goes
    to the audit log with secrets redacted. Exit 0 when it ran and verified (or a dry run),
    1 when it was refused, failed or rolled back.

    Examples:

      infersight runbook run cache-resize -P port=6379 -P maxmemory_mb=512 -p http://prom:9090

      infersight runbook run cache-resize -P port=6379 -p http://prom:9090 --execute --yes
    """
    from infersight.runbooks.checks import Checker
    from infersight.runbooks.config import DEFAULT_CONFIG
    from infersight.runbooks.executor import Runner

    json_out = wants_json(fmt, as_json)
    book = _book(_library(dirs), rid)
    values = _resolve(book, params, dry=not execute)
    checker = Checker(prometheus, DEFAULT_CONFIG.prometheus_timeout_s)

    def progress(msg: str) -> None:
        if not json_out:
            err_console.print(f"[dim]{markup_safe(msg)}[/]", highlight=False, soft_wrap=True)

    runner = Runner(book, values, checker, DEFAULT_CONFIG, progress)
    if not execute:
        report = runner.dry_run()
    else:
        if (book.verify is not None or book.preconditions) and prometheus is None:
            fail(f"{rid} has PromQL checks: give --prometheus URL to evaluate them", EXIT_USAGE)
        if not yes:
            if not sys.stdin.isatty():
                fail(
                    "--execute asks for confirmation: answer on a terminal or add --yes", EXIT_USAGE
                )
            for p in runner.plan():
                if p.phase == "step":
                    err_console.print(f"  {markup_safe(p.what)}", highlight=False, soft_wrap=True)
            if not typer.confirm(f"Run {rid} for real?", default=False, err=True):
                err_console.print("not run")
                raise typer.Exit(EXIT_FINDINGS)
        with _audit(audit) as log:
            report = runner.execute(log)
            progress(f"audit log: {log.path} ({log.records} records)")
    if json_out:
        print_json(report.to_dict())
    else:
        _print_report(report)
    if not report.succeeded:
        raise typer.Exit(EXIT_FINDINGS)


@app.command("drill")
def drill_cmd(
    ids: Annotated[
        list[str] | None, typer.Argument(metavar="[ID]...", help="Runbooks to drill (all).")
    ] = None,
    against: Annotated[
        str,
        typer.Option(
            "--against",
            help="The rehearsal target: a live lab's folder (default: the one `lab up` uses), "
            "or a service's URL.",
        ),
    ] = str(LAB_DIR),
    params: ParamOpt = None,
    prometheus: PromOpt = None,
    audit: AuditOpt = None,
    dirs: DirOpt = None,
    fmt: FormatOpt = "table",
    as_json: JsonAliasOpt = False,
) -> None:
    """Run runbooks for real against a rehearsal target and report which are broken (a missing
    binary, an endpoint that moved, a check that never turns true). Each verified run is
    rolled back, so the target is left as it was. Exit 1 when any is broken.

    Examples:

      infersight lab up && infersight runbook drill

      infersight runbook drill cache-resize --against ./lab-live

      infersight runbook drill degrade --against http://staging:8000 -p http://prom:9090
      -P flags_url=http://flags:8080 -P flag=rerank
    """
    from infersight.runbooks.drill import DrillError, drill, lab_target, url_target
    from infersight.runbooks.params import ParamError, parse_assignments

    json_out = wants_json(fmt, as_json)
    lib = _library(dirs)
    books = [_book(lib, i) for i in ids] if ids else list(lib.books)
    try:
        given = parse_assignments(params or [])
    except ParamError as exc:
        fail(str(exc), EXIT_USAGE)
    if against.startswith(("http://", "https://")):
        target = url_target(against, prometheus)
    else:
        try:
            target = lab_target(Path(against))
        except DrillError as exc:
            fail(f"--against {against}: {exc}")
        if prometheus:
            target = dataclasses.replace(target, prometheus=prometheus)

    def progress(msg: str) -> None:
        if not json_out:
            err_console.print(f"[dim]{markup_safe(msg)}[/]", highlight=False, soft_wrap=True)

    with _audit(audit) as log:
        results = drill(books, target, given, log, dict(os.environ), progress=progress)
    if json_out:
        print_json([r.to_dict() for r in results])
    else:
        table = Table("runbook", "verdict", "why")
        colors = {"works": "green", "broken": "red", "skipped": "dim"}
        for r in results:
            table.add_row(
                markup_safe(r.runbook),
                f"[{colors[r.verdict]}]{r.verdict}[/]",
                markup_safe(r.reason),
            )
        console.print(table)
        broken = sum(r.verdict == "broken" for r in results)
        works = sum(r.verdict == "works" for r in results)
        console.print(f"{works} work, {broken} broken, {len(results) - works - broken} skipped")
    if any(r.verdict == "broken" for r in results):
        raise typer.Exit(EXIT_FINDINGS)
