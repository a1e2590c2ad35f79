"""`infersight detect`: what changed, since when and how widely; and the connection options
`detect` and `diagnose` (`diagnose_cmd.py`) share."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from infersight.cli.catalog_cmds import MappingsOpt
from infersight.cli.common import (
    EXIT_USAGE,
    FormatOpt,
    JsonAliasOpt,
    cannot_judge,
    console,
    fail,
    markup_safe,
    print_json,
    wants_json,
)
from infersight.cli.connection import (
    BasicOpt,
    BearerOpt,
    CaOpt,
    Connection,
    DeadlineOpt,
    InsecureOpt,
    LimitOpt,
    TimeoutOpt,
)
from infersight.cli.exit_codes import verdict
from infersight.cli.inputs import (
    AtOpt,
    BundleArg,
    PrometheusOptional,
    RateWindowOpt,
    StepOpt,
    WindowOpt,
    coverage_of,
    gather,
    prometheus_or_env,
)
from infersight.signals import all_signals
from infersight.timeparse import iso
from infersight.units import format_value

if TYPE_CHECKING:
    from infersight.detect.result import DetectionResult
    from infersight.diagnose.result import Diagnosis, LayerCoverage


def conn_from_options(
    url: str | None,
    bearer: str | None,
    basic: str | None,
    ca: str | None,
    insecure: bool,
    timeout: float,
    deadline: float | None,
    raise_limit: list[str] | None,
) -> Connection | None:
    if url is None:
        return None
    limits = tuple(raise_limit or ())
    return Connection(url, bearer, basic, ca, insecure, timeout, deadline, limits)


def detect(
    bundle: BundleArg = None,
    prometheus: PrometheusOptional = None,
    at: AtOpt = None,
    window: WindowOpt = "1h",
    rate_window: RateWindowOpt = "5m",
    step: StepOpt = "15s",
    limit: Annotated[int, typer.Option("--limit", help="Rows of the anomalies table.")] = 40,
    fmt: FormatOpt = "table",
    as_json: JsonAliasOpt = False,
    mappings: MappingsOpt = None,
    bearer_token: BearerOpt = None,
    basic_auth: BasicOpt = None,
    ca_file: CaOpt = None,
    insecure: InsecureOpt = False,
    timeout: TimeoutOpt = 30.0,
    deadline: DeadlineOpt = None,
    raise_limit: LimitOpt = None,
    follow: Annotated[
        bool,
        typer.Option(
            "--follow",
            help="Stream: evaluate each new scrape interval from --prometheus as it arrives and "
            "print findings as they appear (until Ctrl-C).",
        ),
    ] = False,
) -> None:
    """What deviates from yesterday, last week and the hour before, since when, and how widely.

    The exit status is the diagnosis's verdict on the same window (as `diagnose` exits): 1
    only when something is to act on, not for every deviation listed; 3 (cannot judge) when
    nothing could be read or an all-clear would rest on nothing (one time point; no baseline).

    Examples: infersight detect incident.tar.gz; infersight detect -p http://prom:9090 --window 1h
    """
    as_json = wants_json(fmt, as_json)
    from infersight.detect import detect as run_detect
    from infersight.diagnose import diagnose as run_diagnose

    prometheus = prometheus_or_env(bundle, prometheus)
    conn = conn_from_options(
        prometheus, bearer_token, basic_auth, ca_file, insecure, timeout, deadline, raise_limit
    )
    if follow:
        if conn is None or bundle is not None or at is not None:
            fail("--follow reads a live --prometheus URL (no BUNDLE, no --at)", EXIT_USAGE)
        from infersight.cli.follow import run_cli

        run_cli(conn, window, mappings, as_json)
        return
    inputs = gather(bundle, conn, at, window, as_json, mappings, raise_limit, rate_window, step)
    cov = coverage_of(inputs)
    coverage = [c.__dict__ for c in cov.layers]
    if not cov.judged:
        if as_json:
            print_json(
                {
                    "judged": False,
                    "healthy": False,
                    "reason": cov.reason,
                    "coverage": coverage,
                    "missing_signals": inputs.missing,
                }
            )
        cannot_judge(cov.reason)
    result = run_detect(inputs.windows, at=inputs.at)
    # the exit status is the diagnosis's verdict on the same windows (one voice: detect and
    # diagnose never disagree on whether there is something to act on); a deviation no rule
    # reads as a failure and weaker than an incident is listed, not acted on
    diagnosis = run_diagnose(inputs.windows, detection=result, at=inputs.at, source=inputs.source)
    code = verdict(diagnosis.healthy, diagnosis.judged)
    reason = diagnosis.summary.removeprefix("Cannot judge: ") if not diagnosis.judged else ""
    if as_json:
        print_json(
            {
                **result.to_dict(),
                "judged": diagnosis.judged,
                "healthy": diagnosis.healthy,
                **({"reason": reason} if reason else {}),
                "root_causes": [r.hypothesis for r in diagnosis.root_causes],
                "coverage": coverage,
                "missing_signals": inputs.missing,
            }
        )
    elif diagnosis.judged or result.anomalies:  # what deviates, even where nothing is judged
        _print_anomalies(result, cov.layers, inputs.missing, limit)
        if diagnosis.judged:
            console.print(_verdict_line(diagnosis, len(result.anomalies)), highlight=False)
    if not diagnosis.judged:
        cannot_judge(reason)
    raise typer.Exit(code)


def _verdict_line(diagnosis: Diagnosis, anomalies: int) -> str:
    """The one line that says what the exit status says."""
    if diagnosis.healthy:
        below = f": {anomalies} deviations, none an incident" if anomalies else ": no anomaly"
        return f"[bold green]nothing to act on[/]{below}"
    roots = [markup_safe(r.hypothesis) for r in diagnosis.root_causes[:3]]
    what = ", ".join(roots) if roots else "changes no known cause explains"
    return f"[bold red]something to act on[/]: {what}; `infersight diagnose` says why"


def _print_anomalies(
    result: DetectionResult,
    layers: Sequence[LayerCoverage],
    missing: Mapping[str, str],
    limit: int,
) -> None:
    from infersight.report.view import coverage_note

    scope = result.scope
    console.print(
        markup_safe(
            f"scope: {scope.requests} of the requests ({scope.requests_why}); "
            f"{scope.timing} ({scope.timing_why}); {scope.instances} ({scope.instances_why})"
        ).replace("scope:", "[bold]scope[/]:", 1)
    )
    note = coverage_note(tuple(layers))
    if note:
        console.print(f"[yellow]{markup_safe(note)}[/]")
    if result.unavailable_baselines:
        console.print(
            "[yellow]baselines unavailable[/]: "
            + markup_safe(", ".join(result.unavailable_baselines))
        )
    table = Table(title=f"{len(result.anomalies)} anomalies (strongest first)")
    for col in ("signal", "instance", "kind", "onset", "baseline", "observed", "score"):
        table.add_column(col, no_wrap=col in ("signal", "onset"))
    for a in result.anomalies[:limit]:
        unit = all_signals()[a.signal].unit if a.signal in all_signals() else ""
        table.add_row(
            markup_safe(a.signal),
            markup_safe(a.instance),
            a.kind,
            iso(a.onset)[11:16],
            format_value(a.baseline, unit),
            format_value(a.observed, unit),
            f"{a.score:.1f}",
        )
    console.print(table)
    if missing:
        console.print(f"{len(missing)} signals unavailable: not checked, not healthy")
