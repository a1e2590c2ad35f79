"""`infersight alerts render` and `infersight dashboards render`: rules and a dashboard as code."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Annotated

import typer

from infersight.cli.catalog_cmds import MappingsOpt
from infersight.cli.common import (
    EXIT_USAGE,
    FormatOpt,
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
    TimeoutOpt,
)
from infersight.exporters import Family, load_catalog

alerts_app = typer.Typer(
    help="Prometheus recording and alerting rules for the canonical signals (seed §6.1).",
    no_args_is_help=True,
)
dashboards_app = typer.Typer(
    help="A Grafana dashboard of the canonical signals, one row per layer.",
    no_args_is_help=True,
)

ExportersOpt = Annotated[
    str | None,
    typer.Option(
        "--exporters",
        "-e",
        help="Comma-separated exporter families (`infersight exporters` lists them).",
        metavar="FAMILIES",
    ),
]
DetectOpt = Annotated[
    str | None,
    typer.Option(
        "--prometheus",
        "-p",
        help="Detect the exporter families (and the metric names each has) on this server.",
        envvar="INFERSIGHT_PROMETHEUS",
    ),
]


def _families(
    exporters: str | None,
    prometheus: str | None,
    mappings: list[Path] | None,
    conn_args: tuple[str | None, str | None, str | None, bool, float, float | None],
) -> tuple[list[Family], set[str] | None]:
    from infersight.alerts.render import UnknownFamilyError, choose

    catalog = load_catalog(mappings or [])
    if exporters is None and prometheus is None:
        fail("say which exporters: --exporters vllm,dcgm,... or -p URL to detect them", EXIT_USAGE)
    available: set[str] | None = None
    if prometheus is not None:
        bearer, basic, ca, insecure, timeout, deadline = conn_args
        conn = Connection(prometheus, bearer, basic, ca, insecure, timeout, deadline)
        available = set(conn.client().metric_names())
        found = catalog.detect(available)
        if not found:
            fail(
                f"{conn.url}: no known exporter's metrics found; check the URL, or name them "
                "with --exporters"
            )
        names = [f.name for f in found]
    if exporters is not None:
        names = [n.strip() for n in exporters.split(",") if n.strip()]
    try:
        return choose(catalog, names), available
    except UnknownFamilyError as exc:
        fail(str(exc), EXIT_USAGE)


def _promtool_check(paths: list[Path]) -> str:
    """`promtool check rules` on the files: "" when it passes or is not installed."""
    tool = shutil.which("promtool")
    if tool is None:
        return ""
    res = subprocess.run(
        [tool, "check", "rules", *map(str, paths)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if res.returncode == 0:
        return ""
    lines = (res.stderr or res.stdout).strip().splitlines()
    return lines[-1] if lines else f"exit {res.returncode}"


@alerts_app.command("render")
def alerts_render(
    out: Annotated[Path, typer.Option("--out", "-o", help="Folder for the two rule files.")],
    exporters: ExportersOpt = None,
    prometheus: DetectOpt = None,
    overwrite: Annotated[
        bool, typer.Option("--overwrite", help="Replace rule files already there.")
    ] = False,
    runbook_url: Annotated[
        str | None,
        typer.Option(
            "--runbook-url",
            help="Where your copy of the runbooks page (docs/runbooks.md) is published: each "
            "alert's runbook_url annotation is this URL, '#', and its runbook's id. Default: "
            "the path docs/runbooks.md.",
            metavar="URL",
        ),
    ] = None,
    fmt: FormatOpt = "table",
    mappings: MappingsOpt = None,
    bearer_token: BearerOpt = None,
    basic_auth: BasicOpt = None,
    ca_file: CaOpt = None,
    insecure: InsecureOpt = False,
    timeout: TimeoutOpt = 30.0,
    deadline: DeadlineOpt = None,
) -> None:
    """Write recording rules (each canonical signal under one name, `infersight:<layer>_<name>`)
    and alerting rules over them: soft signals against the same time yesterday and the previous
    hour, VRAM heading for full, GPU clocks held down and Xid errors, a queue growing while the
    GPUs idle, and error-budget burn rates; latency alerts read the gateway's own histogram
    where an exporter has one. Each alert carries `runbook_url`. Every file is checked with
    `promtool check rules` when promtool is installed.

    Examples:

      infersight alerts render --exporters vllm,dcgm,node,redis -o rules/

      infersight alerts render -e vllm,ingress_nginx -o rules/ --runbook-url https://wiki.example/infersight-runbooks

      infersight alerts render -p http://prom:9090 -o /etc/prometheus/rules/ --overwrite
    """
    from pydantic import ValidationError

    from infersight.alerts.config import AlertsConfig
    from infersight.alerts.render import ALERTS_FILE, RECORDING_FILE, build, write
    from infersight.safe_write import check_folder, check_target, existing

    as_json = wants_json(fmt, False)
    try:
        cfg = AlertsConfig() if runbook_url is None else AlertsConfig(runbook_base_url=runbook_url)
    except ValidationError as exc:
        why = exc.errors()[0]["msg"].removeprefix("Value error, ")
        fail(f"--runbook-url: {why}", EXIT_USAGE)
    check_folder(out, create=True)
    for name in (RECORDING_FILE, ALERTS_FILE):  # both or neither: never half a rule set
        if not overwrite and existing(out / name) is not None:
            fail(f"{out / name} exists; pass --overwrite to replace it")
        check_target(out / name, "file", overwrite=True)
    conn = (bearer_token, basic_auth, ca_file, insecure, timeout, deadline)
    families, available = _families(exporters, prometheus, mappings, conn)
    rules = build(families, available, cfg)
    paths = write(rules, out, overwrite=overwrite)
    problem = _promtool_check(paths)
    if problem:
        fail(f"promtool rejects the rendered rules: {problem} (please report it)")
    if as_json:
        print_json({**rules.to_dict(), "files": [str(p) for p in paths]})
        return
    console.print(
        f"{len(rules.signals)} signals recorded, {len(rules.alerts)} alerts, for "
        f"{markup_safe(', '.join(rules.families))}: " + markup_safe(", ".join(map(str, paths)))
    )
    for why in rules.skipped:
        console.print(f"[yellow]left out[/] {markup_safe(why)}")


@dashboards_app.command("render")
def dashboards_render(
    out: Annotated[Path, typer.Option("--out", "-o", help="Dashboard JSON file to write.")],
    exporters: ExportersOpt = None,
    prometheus: DetectOpt = None,
    overwrite: Annotated[bool, typer.Option("--overwrite", help="Replace the file.")] = False,
    mappings: MappingsOpt = None,
    bearer_token: BearerOpt = None,
    basic_auth: BasicOpt = None,
    ca_file: CaOpt = None,
    insecure: InsecureOpt = False,
    timeout: TimeoutOpt = 30.0,
    deadline: DeadlineOpt = None,
) -> None:
    """Write a Grafana dashboard of the recorded signals (load the rules from `infersight
    alerts render` first): one row per layer in the order an investigation walks them, each
    signal with yesterday's values dashed behind it, and variables for machine and model.
    Without --exporters or -p, every canonical signal gets a panel.

    Examples:

      infersight dashboards render -o infersight.json

      infersight dashboards render -e vllm,dcgm,redis -o infersight.json --overwrite
    """
    from infersight.alerts import dashboard
    from infersight.alerts.render import build
    from infersight.safe_write import check_output, existing, write_text

    if not overwrite and existing(out) is not None:
        fail(f"{out} exists; pass --overwrite to replace it")
    check_output(out, "file", overwrite)
    try:
        import grafana_foundation_sdk  # noqa: F401
    except ImportError:
        fail("dashboards need grafana-foundation-sdk: pip install 'infersight[dashboards]'")
    signals = None
    if exporters is not None or prometheus is not None:
        conn = (bearer_token, basic_auth, ca_file, insecure, timeout, deadline)
        signals = build(*_families(exporters, prometheus, mappings, conn)).signals
    text = dashboard.to_json(dashboard.build(signals))
    problems = dashboard.validate(text)
    if problems:
        fail(f"the dashboard does not validate: {problems[0]} (please report it)")
    write_text(out, text, overwrite=overwrite)
    console.print(f"dashboard written: {markup_safe(out)}")
