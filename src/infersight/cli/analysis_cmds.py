"""`infersight detect` and `infersight diagnose`: what changed, and which layer broke and why."""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
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
    err_console,
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
    WindowOpt,
    coverage_of,
    gather,
    prometheus_or_env,
)
from infersight.cli.serve_cmds import AlertOpt, alert_in_bundle, alert_pull, alert_start
from infersight.signals import all_signals
from infersight.timeparse import iso
from infersight.units import format_value
from infersight.windows import INCIDENT

if TYPE_CHECKING:
    from infersight.detect.result import DetectionResult
    from infersight.diagnose.result import Diagnosis, LayerCoverage
    from infersight.report.seen_before import PastIncident


def _conn(
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
    conn = _conn(
        prometheus, bearer_token, basic_auth, ca_file, insecure, timeout, deadline, raise_limit
    )
    if follow:
        if conn is None or bundle is not None or at is not None:
            fail("--follow reads a live --prometheus URL (no BUNDLE, no --at)", EXIT_USAGE)
        from infersight.cli.follow import run_cli

        run_cli(conn, window, mappings, as_json)
        return
    inputs = gather(bundle, conn, at, window, as_json, mappings, raise_limit, rate_window)
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


ReportFormat = Annotated[
    str | None,
    typer.Option(
        "--format",
        "-f",
        help="terminal, md, brief (a few lines for Slack), json or html. Default: terminal on "
        "stdout; with --out, from the file's suffix (.md, .json, .html), plain text otherwise.",
        metavar="FORMAT",
    ),
]
REPORT_FORMATS = ("terminal", "text", "md", "markdown", "brief", "json", "html")


def _ui_url(url: str | None) -> str | None:
    """A server URL fit for a link in a report: no credentials, no query."""
    if url is None or not url.startswith(("http://", "https://")):
        return None
    scheme, _, rest = url.partition("://")
    host_path = rest.split("?", 1)[0].rsplit("@", 1)[-1]
    return f"{scheme}://{host_path}"


def _seen_before(diagnosis: Diagnosis, history: Path | None) -> tuple[PastIncident, ...] | None:
    """The past incidents like this one in the postmortem library (None without one); files
    that cannot be read are named on stderr and the rest are searched."""
    if history is None or not diagnosis.judged:
        return None
    from infersight.postmortem import LibraryError, seen_before

    try:
        seen, problems = seen_before(diagnosis, history)
    except LibraryError as exc:
        fail(f"--history: {exc}")
    for p in problems:
        err_console.print(f"[yellow]history: skipped[/] {markup_safe(p)}", highlight=False)
    return seen


def diagnose(
    bundle: BundleArg = None,
    prometheus: PrometheusOptional = None,
    at: AtOpt = None,
    alert: AlertOpt = None,
    window: WindowOpt = "1h",
    rate_window: RateWindowOpt = "5m",
    rules: Annotated[
        list[Path] | None,
        typer.Option("--rules", help="Folder of your own hypothesis files (*.yaml); repeatable."),
    ] = None,
    path_file: Annotated[
        Path | None,
        typer.Option(
            "--path-file",
            help="YAML of request-path edges the metrics cannot show (an API calling a reranker "
            "without metrics): calls/misses/runs_on lists of [PART:INSTANCE, PART:INSTANCE] "
            "(docs/path.md).",
            envvar="INFERSIGHT_PATH_FILE",
            metavar="FILE",
        ),
    ] = None,
    fmt: ReportFormat = None,
    out: Annotated[
        Path | None,
        typer.Option("--out", "-o", help="Write the report to this file instead of stdout."),
    ] = None,
    full: Annotated[
        bool,
        typer.Option(
            "--full",
            "-v",
            help="Everything: scope, coverage, the evidence step by step, why each cause was "
            "ruled out. Default: the answer on one screen.",
        ),
    ] = False,
    brief: Annotated[
        bool, typer.Option("--brief", help="A few lines for a chat thread (= --format brief).")
    ] = False,
    as_json: JsonAliasOpt = False,
    prometheus_ui: Annotated[
        str | None,
        typer.Option(
            "--prometheus-url",
            help="Prometheus UI to link each finding's query to (default: the server read).",
            metavar="URL",
        ),
    ] = None,
    grafana_url: Annotated[
        str | None,
        typer.Option(
            "--grafana-url",
            help="Grafana to link each finding's query to, in Explore.",
            envvar="INFERSIGHT_GRAFANA_URL",
            metavar="URL",
        ),
    ] = None,
    grafana_datasource: Annotated[
        str, typer.Option("--grafana-datasource", help="The Grafana data source to query.")
    ] = "prometheus",
    history: Annotated[
        Path | None,
        typer.Option(
            "--history",
            help="A postmortem library folder: link the most similar past incidents in the "
            "report (`infersight postmortem`).",
            envvar="INFERSIGHT_HISTORY",
            metavar="DIR",
        ),
    ] = None,
    mappings: MappingsOpt = None,
    bearer_token: BearerOpt = None,
    basic_auth: BasicOpt = None,
    ca_file: CaOpt = None,
    insecure: InsecureOpt = False,
    timeout: TimeoutOpt = 30.0,
    deadline: DeadlineOpt = None,
    raise_limit: LimitOpt = None,
) -> None:
    """Which layer broke and why: root causes, the chain to the symptoms, and the evidence.

    Walks the layers in order (access, service, inference, dependency, infrastructure), marks
    every hypothesis confirmed, refuted or inconclusive (naming the missing signals), and ranks
    the root causes. Prints the answer on one screen; -v/--full prints everything.

    Exit 1 when something is to act on; 3 (cannot judge) when nothing could be read (no
    series, every query failed, only NaN) or "nothing is wrong" would rest on nothing (one time
    point; no cause checkable; no baseline).

    Examples:

      infersight diagnose incident.tar.gz

      infersight diagnose incident.tar.gz --brief

      infersight diagnose -p http://prom:9090 --at 02:30Z -o report.html

      infersight diagnose incident.tar.gz --history ops/postmortems   (seen before: …)
    """
    from infersight import coverage
    from infersight.diagnose import KBError, TopologyError, load_kb, load_topology
    from infersight.diagnose import diagnose as run_diagnose
    from infersight.report import render, render_terminal, write_report
    from infersight.report.links import Links
    from infersight.report.timeline_marks import ALERT_KEY
    from infersight.report.write import format_for
    from infersight.safe_write import OutputError, check_output
    from infersight.userfile import UserFileError

    starts_at = alert_start(alert)
    if starts_at is not None and bundle is None:  # the window serve would pull for it
        at, window = alert_pull(starts_at, at, window)

    if brief or as_json:
        if fmt is not None and fmt != ("brief" if brief else "json"):
            fail(f"--{'brief' if brief else 'json'} and --format {fmt} disagree", EXIT_USAGE)
        fmt = "brief" if brief else "json"
    if fmt is not None and fmt not in REPORT_FORMATS:
        fail(f"--format {fmt!r}: choose terminal, md, brief, json or html", EXIT_USAGE)
    if fmt == "html" and out is None:
        fail("--format html needs --out FILE.html", EXIT_USAGE)
    if out is not None:
        try:  # before the analysis: a bad --out must not cost a pull first
            check_output(out)
        except OutputError as exc:
            fail(f"--out: {exc}", EXIT_USAGE)
    fmt = format_for(out, fmt) if out is not None else fmt or "terminal"
    if history is not None and not history.is_dir():
        fail(f"--history {history}: no such folder (a postmortem library)", EXIT_USAGE)
    try:
        kb = load_kb(rules or [])
    except KBError as exc:
        fail(str(exc))
    try:
        topology = load_topology(path_file) if path_file is not None else None
    except (TopologyError, UserFileError) as exc:
        fail(f"--path-file: {exc}", EXIT_USAGE)
    prometheus = prometheus_or_env(bundle, prometheus)
    conn = _conn(
        prometheus, bearer_token, basic_auth, ca_file, insecure, timeout, deadline, raise_limit
    )
    quiet = fmt not in ("terminal", "text") and out is None
    inputs = gather(bundle, conn, at, window, quiet, mappings, raise_limit, rate_window)
    if starts_at is not None and bundle is not None:
        alert_in_bundle(starts_at, inputs.windows[INCIDENT], inputs.at)
    if starts_at is not None:  # the HTML timeline marks it
        inputs.source[ALERT_KEY] = iso(starts_at)
    cov = coverage_of(inputs)
    if cov.judged:  # judged unless an all-clear has no grounds (coverage.apply, in diagnose)
        diagnosis = run_diagnose(
            inputs.windows, kb=kb, at=inputs.at, source=inputs.source, topology=topology
        )
    else:
        diagnosis = coverage.unjudged(inputs.windows, cov, inputs.missing, inputs.source)
    # the reports quote the queries the data came from, not the catalog's first mapping
    diagnosis = replace(diagnosis, queries_run=inputs.queries)
    links = Links(
        _ui_url(prometheus_ui or prometheus or inputs.source.get("url")),
        _ui_url(grafana_url),
        grafana_datasource,
    )
    seen = _seen_before(diagnosis, history)
    if out is not None:
        try:
            write_report(diagnosis, out, fmt, inputs.windows, full=full, links=links, seen=seen)
        except OutputError as exc:
            fail(str(exc))
        except OSError as exc:
            fail(f"{out}: cannot be written ({exc.strerror or exc})")
        console.print(f"wrote {markup_safe(out)}")
    elif fmt in ("terminal", "text"):
        if diagnosis.judged:
            render_terminal(diagnosis, console, full=full, seen=seen)
    else:
        text = render(diagnosis, fmt, inputs.windows, full=full, links=links, seen=seen)
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
    if not diagnosis.judged:
        cannot_judge(diagnosis.summary)
    raise typer.Exit(verdict(diagnosis.healthy))
