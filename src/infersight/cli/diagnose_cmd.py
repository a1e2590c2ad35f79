"""`infersight diagnose`: which layer broke and why, with the evidence and the queries it came
from (`detect` and the connection helpers it shares: `analysis_cmds.py`)."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from infersight.cli.analysis_cmds import conn_from_options
from infersight.cli.catalog_cmds import MappingsOpt
from infersight.cli.common import (
    EXIT_USAGE,
    JsonAliasOpt,
    cannot_judge,
    console,
    err_console,
    fail,
    markup_safe,
)
from infersight.cli.connection import (
    BasicOpt,
    BearerOpt,
    CaOpt,
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
from infersight.cli.serve_cmds import AlertOpt, alert_in_bundle, alert_pull, alert_start
from infersight.timeparse import iso
from infersight.windows import INCIDENT

if TYPE_CHECKING:
    from infersight.diagnose.result import Diagnosis
    from infersight.report.seen_before import PastIncident


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
    step: StepOpt = "15s",
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
    conn = conn_from_options(
        prometheus, bearer_token, basic_auth, ca_file, insecure, timeout, deadline, raise_limit
    )
    quiet = fmt not in ("terminal", "text") and out is None
    inputs = gather(bundle, conn, at, window, quiet, mappings, raise_limit, rate_window, step)
    if starts_at is not None and bundle is not None:
        alert_in_bundle(starts_at, inputs.windows[INCIDENT], inputs.at)
    if starts_at is not None:  # the HTML timeline marks it
        inputs.source[ALERT_KEY] = iso(starts_at)
    if topology:  # the report says the path was not built from the scrape alone
        inputs.source["path_file"] = topology.source
    cov = coverage_of(inputs)
    if cov.judged:  # judged unless an all-clear has no grounds (coverage.apply, in diagnose)
        diagnosis = run_diagnose(
            inputs.windows, kb=kb, at=inputs.at, source=inputs.source, topology=topology
        )
    else:
        diagnosis = coverage.unjudged(inputs.windows, cov, inputs.missing, inputs.source)
    # the reports quote the queries the data came from, not the catalog's first mapping
    diagnosis = replace(diagnosis, queries_run=inputs.queries)
    if inputs.pods or inputs.changes:  # on Kubernetes: what changed, and which pods ran where
        diagnosis = replace(diagnosis, cluster_changes=inputs.changes, pods=inputs.pods.to_dict())
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
