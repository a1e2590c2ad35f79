"""`infersight detect` and `infersight diagnose`: what changed, and which layer broke and why."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from infersight.cli.catalog_cmds import JsonOpt, MappingsOpt
from infersight.cli.common import EXIT_FINDINGS, EXIT_USAGE, console, fail, print_json
from infersight.cli.connection import (
    BasicOpt,
    BearerOpt,
    CaOpt,
    Connection,
    InsecureOpt,
    TimeoutOpt,
)
from infersight.cli.inputs import AtOpt, BundleArg, PrometheusOptional, WindowOpt, gather
from infersight.signals import all_signals
from infersight.timeparse import iso
from infersight.units import format_value


def _conn(
    url: str | None,
    bearer: str | None,
    basic: str | None,
    ca: str | None,
    insecure: bool,
    timeout: float,
) -> Connection | None:
    return None if url is None else Connection(url, bearer, basic, ca, insecure, timeout)


def detect(
    bundle: BundleArg = None,
    prometheus: PrometheusOptional = None,
    at: AtOpt = None,
    window: WindowOpt = "1h",
    limit: Annotated[int, typer.Option("--limit", help="Rows of the anomalies table.")] = 40,
    as_json: JsonOpt = False,
    mappings: MappingsOpt = None,
    bearer_token: BearerOpt = None,
    basic_auth: BasicOpt = None,
    ca_file: CaOpt = None,
    insecure: InsecureOpt = False,
    timeout: TimeoutOpt = 30.0,
) -> None:
    """What deviates from yesterday, last week and the hour before, since when, and how widely.

    Exit status 1 when anomalies are found, 0 when none.

    Examples: infersight detect incident.tar.gz; infersight detect -p http://prom:9090 --window 1h
    """
    from infersight.detect import detect as run_detect

    conn = _conn(prometheus, bearer_token, basic_auth, ca_file, insecure, timeout)
    inputs = gather(bundle, conn, at, window, as_json, mappings)
    result = run_detect(inputs.windows, at=inputs.at)
    if as_json:
        print_json({**result.to_dict(), "missing_signals": inputs.missing})
    else:
        scope = result.scope
        console.print(
            f"[bold]scope[/]: {scope.requests} of the requests ({scope.requests_why}); "
            f"{scope.timing} ({scope.timing_why}); {scope.instances} ({scope.instances_why})"
        )
        if result.unavailable_baselines:
            console.print(
                f"[yellow]baselines unavailable[/]: {', '.join(result.unavailable_baselines)}"
            )
        table = Table(title=f"{len(result.anomalies)} anomalies (strongest first)")
        for col in ("signal", "instance", "kind", "onset", "baseline", "observed", "score"):
            table.add_column(col, no_wrap=col in ("signal", "onset"))
        for a in result.anomalies[:limit]:
            unit = all_signals()[a.signal].unit if a.signal in all_signals() else ""
            table.add_row(
                a.signal,
                a.instance,
                a.kind,
                iso(a.onset)[11:16],
                format_value(a.baseline, unit),
                format_value(a.observed, unit),
                f"{a.score:.1f}",
            )
        console.print(table)
        if inputs.missing:
            console.print(f"{len(inputs.missing)} signals unavailable: not checked, not healthy")
    if result.anomalies:
        raise typer.Exit(EXIT_FINDINGS)


def diagnose(
    bundle: BundleArg = None,
    prometheus: PrometheusOptional = None,
    at: AtOpt = None,
    window: WindowOpt = "1h",
    rules: Annotated[
        list[Path] | None,
        typer.Option("--rules", help="Folder of your own hypothesis files (*.yaml); repeatable."),
    ] = None,
    fmt: Annotated[
        str, typer.Option("--format", "-f", help="terminal, md, json or html.")
    ] = "terminal",
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="Write the report here instead of stdout.")
    ] = None,
    mappings: MappingsOpt = None,
    bearer_token: BearerOpt = None,
    basic_auth: BasicOpt = None,
    ca_file: CaOpt = None,
    insecure: InsecureOpt = False,
    timeout: TimeoutOpt = 30.0,
) -> None:
    """Which layer broke and why: root causes, the chain to the symptoms, and the evidence.

    Walks the layers in order (access, service, inference, dependency, infrastructure), marks
    every hypothesis confirmed, refuted or inconclusive (naming the missing signals), and ranks
    the root causes. Exit status 1 when a root cause is found, 0 when nothing is wrong.

    Examples:

      infersight diagnose incident.tar.gz

      infersight diagnose -p http://prom:9090 --at 2026-12-02T02:30:00Z -f html -o report.html
    """
    from infersight.diagnose import diagnose as run_diagnose
    from infersight.diagnose import load_kb
    from infersight.report import render_terminal, write_report

    if fmt not in ("terminal", "md", "json", "html"):
        fail(f"--format {fmt!r}: choose terminal, md, json or html", EXIT_USAGE)
    if fmt == "html" and out is None:
        fail("--format html needs --out FILE.html", EXIT_USAGE)
    conn = _conn(prometheus, bearer_token, basic_auth, ca_file, insecure, timeout)
    inputs = gather(bundle, conn, at, window, fmt != "terminal" and out is None, mappings)
    kb = load_kb(rules or [])
    diagnosis = run_diagnose(inputs.windows, kb=kb, at=inputs.at, source=inputs.source)
    if out is not None:
        write_report(diagnosis, out, fmt, inputs.windows)
        console.print(f"wrote {out}")
    elif fmt == "terminal":
        render_terminal(diagnosis, console)
    else:
        from infersight.report import render_json, render_markdown

        print(render_json(diagnosis) if fmt == "json" else render_markdown(diagnosis))
    if not diagnosis.healthy:
        raise typer.Exit(EXIT_FINDINGS)
