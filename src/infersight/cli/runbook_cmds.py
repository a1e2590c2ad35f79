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
from infersight.cli.runbook_view import print_report, show_ways

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
StackOpt = Annotated[
    str | None,
    typer.Option(
        "--stack",
        help="The stack a remedy's runbook is chosen for, comma-separated: kubernetes, "
        "ingress-nginx, haproxy, envoy, nginx-plus. Default: what the exporters on "
        "--prometheus reveal.",
        metavar="PARTS",
    ),
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


def _stack(stack: str | None, prometheus: str | None) -> Any:
    """The stack given with --stack, else the one the exporters on --prometheus reveal."""
    from infersight.runbooks.config import DEFAULT_CONFIG
    from infersight.runbooks.stack import Stack, StackError, parse_stack, probe_stack

    if stack is not None:
        try:
            return parse_stack(stack)
        except StackError as exc:
            fail(str(exc), EXIT_USAGE)
    if prometheus is not None:
        return probe_stack(prometheus, DEFAULT_CONFIG.prometheus_timeout_s)
    return Stack(frozenset(), (), "no --stack, and no --prometheus to detect it from")


def _pick(lib: Any, rid: str, stack: str | None, prometheus: str | None) -> tuple[Any, str]:
    """The runbook `rid` names, and the line saying which stack it was chosen for ("" when
    there was no choice to make). A remedy with ways for several stacks takes the one for
    the stack given or detected; none fitting is a usage error naming them."""
    from infersight.runbooks.choose import choose, variants

    ways = variants(lib, rid)
    if not ways:
        fail(f"no runbook {rid!r}; `infersight runbook list` shows them", EXIT_USAGE)
    if lib.get(rid) is not None and len(ways) == 1:
        book = ways[0]
        if book.stack and (stack is not None or prometheus is not None):
            found = _stack(stack, prometheus)
            if not set(book.stack) <= found.parts:
                return book, f"{rid} drives {' + '.join(book.stack)}; stack {found.describe()}"
        return book, ""
    found = _stack(stack, prometheus)
    choice = choose(lib, rid, found)
    if choice.book is None:
        why = found.describe() if found.known else found.origin
        fail(f"{rid}: {choice.note()} ({why}); name one, or give --stack PARTS", EXIT_USAGE)
    return choice.book, f"stack {found.describe()}: {rid} is {choice.book.id} here"


@app.command("list")
def list_cmd(dirs: DirOpt = None, fmt: FormatOpt = "table", as_json: JsonAliasOpt = False) -> None:
    """Every runbook: id, what it does, the stack it drives, where it runs, what its steps are.

    Example: infersight runbook list --dir ./my-runbooks
    """
    lib = _library(dirs)
    rows = [
        {
            "id": b.id,
            "title": b.title,
            "remedy": b.remedy,
            "stack": b.stack,
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
    table = Table("id", "title", "stack", "targets", "steps", "verify", "rollback")
    for r in rows:
        table.add_row(
            markup_safe(r["id"]),
            markup_safe(r["title"]),
            " + ".join(r["stack"]) or "any",
            ",".join(r["targets"]),
            ",".join(r["steps"]),
            "yes" if r["verified"] else "-",
            str(r["rollback"]) if r["rollback"] else "-",
        )
    console.print(table)


@app.command("show")
def show(
    rid: Annotated[str, typer.Argument(metavar="ID", help="The runbook's id, or a remedy's.")],
    stack: StackOpt = None,
    prometheus: PromOpt = None,
    dirs: DirOpt = None,
    fmt: FormatOpt = "table",
    as_json: JsonAliasOpt = False,
) -> None:
    """A runbook in full: parameters, preconditions, steps, verification, rollback. For a
    remedy with ways for several stacks, the one for --stack (or the stack on --prometheus);
    with neither, the list of them.

    Examples:

      infersight runbook show gateway-failover

      infersight runbook show lb-restore-endpoints --stack kubernetes,ingress-nginx
    """
    from infersight.runbooks.choose import variants

    lib = _library(dirs)
    ways = variants(lib, rid)
    if len(ways) > 1 and stack is None and prometheus is None:
        show_ways(rid, ways, wants_json(fmt, as_json))
        return
    book, why = _pick(lib, rid, stack, prometheus)
    if wants_json(fmt, as_json):
        doc = book.model_dump(by_alias=True, exclude_none=True)
        print_json({**doc, "file": lib.origins[book.id], "chosen": why})
        return
    out = [f"[bold]{markup_safe(book.id)}[/]: {markup_safe(book.title)}  ({lib.origins[book.id]})"]
    if why:
        out.append(markup_safe(why))
    if book.description:
        out.append(markup_safe(book.description.strip()))
    out.append(f"stack: {' + '.join(book.stack) or 'any'}; targets: {', '.join(book.targets)}")
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
    if book.preconditions:
        out.append("[bold]preconditions[/]")
        out += [f"  {markup_safe(c.name)}: {markup_safe(c.describe())}" for c in book.preconditions]
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


@app.command("run")
def run(
    rid: Annotated[str, typer.Argument(metavar="ID", help="The runbook's id, or a remedy's.")],
    params: ParamOpt = None,
    stack: StackOpt = None,
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
    to the audit log with secrets redacted. A remedy a diagnosis names (lb-restore-endpoints)
    runs the way for the stack: --stack, or what the exporters on --prometheus reveal. Exit 0
    when it ran and verified (or a dry run that a real run would go on with), 1 when it was
    refused (a dry run too: a missing binary, a precondition that fails), failed or rolled
    back.

    Examples:

      infersight runbook run cache-resize -P port=6379 -P maxmemory_mb=512 -p http://prom:9090

      infersight runbook run lb-restore-endpoints --stack kubernetes,ingress-nginx
      -P deployment=llm -P service=llm -P ingress=llm

      infersight runbook run cache-resize -P port=6379 -p http://prom:9090 --execute --yes
    """
    from infersight.runbooks.checks import Checker
    from infersight.runbooks.config import DEFAULT_CONFIG
    from infersight.runbooks.executor import Runner

    json_out = wants_json(fmt, as_json)
    book, chosen = _pick(_library(dirs), rid, stack, prometheus)
    values = _resolve(book, params, dry=not execute)
    checker = Checker(prometheus, DEFAULT_CONFIG.prometheus_timeout_s)

    def progress(msg: str) -> None:
        if not json_out:
            err_console.print(f"[dim]{markup_safe(msg)}[/]", highlight=False, soft_wrap=True)

    runner = Runner(book, values, checker, DEFAULT_CONFIG, progress)
    if chosen and execute:
        progress(chosen)  # before anything runs: the stack it was chosen for
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
    report.stack = chosen
    if json_out:
        print_json(report.to_dict())
    else:
        print_report(report)
    if not report.succeeded:
        raise typer.Exit(EXIT_FINDINGS)


def _drilled(lib: Any, ids: list[str]) -> list[Any]:
    """The runbooks named, a remedy standing for each of its ways (those not made for the
    target are skipped, as ever)."""
    from infersight.runbooks.choose import variants

    out: list[Any] = []
    for rid in ids:
        ways = variants(lib, rid) or (_book(lib, rid),)
        out += [b for b in ways if b not in out]
    return out


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
    books = _drilled(lib, ids) if ids else list(lib.books)
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
