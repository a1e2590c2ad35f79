"""`infersight probe` and `infersight pull`: what a live server offers, and freezing the scene."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from infersight.cli.catalog_cmds import MappingsOpt
from infersight.cli.common import (
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
from infersight.cli.connection import (
    BasicOpt,
    BearerOpt,
    CaOpt,
    Connection,
    DeadlineOpt,
    InsecureOpt,
    LimitOpt,
    PrometheusOpt,
    TimeoutOpt,
)
from infersight.cli.inputs import (
    AT_HELP,
    check_grid,
    cluster_changes,
    data_elsewhere,
    parse_at,
    pull_windows,
)
from infersight.exporters import load_catalog
from infersight.timeparse import iso, parse_duration, promql_duration
from infersight.windows import INCIDENT

SignalsOpt = Annotated[
    str | None,
    typer.Option("--signals", help="Comma-separated canonical signals (default: all)."),
]


def _signal_list(text: str | None) -> list[str] | None:
    from infersight.signals import get_signal

    if text is None:
        return None
    names = [s.strip() for s in text.split(",") if s.strip()]
    for n in names:
        get_signal(n)  # raises UnknownSignalError with a hint
    return names


def probe(
    prometheus: PrometheusOpt,
    signals: SignalsOpt = None,
    at: Annotated[
        str | None,
        typer.Option(
            "--at",
            help="Only the metrics with samples in the --window ending then: "
            + AT_HELP
            + " Default: every metric the server holds, at any time.",
            metavar="TIME",
        ),
    ] = None,
    window: Annotated[
        str,
        typer.Option(
            "--window", help="With --at: the length of the window, 1h.", metavar="DURATION"
        ),
    ] = "1h",
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
) -> None:
    """Which exporters a server has, which signals each layer is covered by, what is missing.

    A missing signal is reported as unavailable, with the reason, never as healthy. With
    --at, what the window a `diagnose --at` would read holds.

    Examples: infersight probe --prometheus http://localhost:9090;
    infersight probe -p http://localhost:9090 --at 02:30Z --window 1h
    """
    as_json = wants_json(fmt, as_json)
    from infersight.sources.probe import probe as run_probe

    span: tuple[float | None, float | None] = (None, None)
    if at is not None:
        try:
            end, length = parse_at(at), parse_duration(window)
        except ValueError as exc:
            fail(f"--at/--window: {exc}", EXIT_USAGE)
        check_grid(length, 15.0, end)
        span = (end - length, end)
    elif window != "1h":
        fail("--window applies with --at (without it, probe reads every metric name)", EXIT_USAGE)

    conn = Connection(
        prometheus, bearer_token, basic_auth, ca_file, insecure, timeout, deadline,
        tuple(raise_limit or ()),
    )  # fmt: skip
    result = run_probe(conn.client(), load_catalog(mappings or []), _signal_list(signals), *span)
    if as_json:
        print_json(result.to_dict())
        return
    within = "" if span[0] is None else f" with samples in {iso(span[0])} → {iso(span[1] or 0)}"
    console.print(
        f"[bold]{markup_safe(result.url)}[/]: {len(result.metric_names)} metric names{within}; "
        f"exporter families: {', '.join(result.families) or 'none recognised'}"
    )
    table = Table(title="coverage per layer (unavailable means unknown, not healthy)")
    table.add_column("layer", no_wrap=True)
    table.add_column("available", no_wrap=True)
    table.add_column("unavailable, by reason", overflow="fold")
    for layer, (have, total) in result.coverage.items():
        by_reason: dict[str, list[str]] = {}
        for a in result.signals.values():
            if a.layer == layer and not a.available:
                by_reason.setdefault(a.reason, []).append(a.signal.split(".", 1)[1])
        cell = "\n".join(f"{', '.join(sigs)}: [dim]{why}[/]" for why, sigs in by_reason.items())
        table.add_row(layer, f"{have}/{total}", cell or "-")
    console.print(table)


def pull(
    prometheus: PrometheusOpt,
    out: Annotated[
        Path, typer.Option("--out", "-o", help="Bundle to write: NAME.tar.gz, or a directory.")
    ],
    window: Annotated[
        str,
        typer.Option(
            "--window", help="Length of the window, ending at --at: 30m, 1h.", metavar="DURATION"
        ),
    ] = "1h",
    since: Annotated[
        str | None, typer.Option("--since", hidden=True, help="The old name of --window.")
    ] = None,
    at: Annotated[
        str, typer.Option("--at", help="End of the window. " + AT_HELP, metavar="TIME")
    ] = "now",
    step: Annotated[
        str, typer.Option("--step", help="Resolution of the time grid.", metavar="DURATION")
    ] = "15s",
    rate_window_opt: Annotated[
        str,
        typer.Option(
            "--rate-window",
            help="Window of rate() and histogram_quantile(): 5m.",
            metavar="DURATION",
        ),
    ] = "5m",
    baselines: Annotated[
        str,
        typer.Option(
            "--baselines",
            metavar="DURATIONS",
            help="Also pull the same window shifted back by each of these (for the detectors' "
            "baselines: the hour before, yesterday, last week); `none` to skip.",
        ),
    ] = "1h,1d,7d",
    signals: SignalsOpt = None,
    overwrite: Annotated[
        bool, typer.Option("--overwrite", help="Replace an existing bundle.")
    ] = False,
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
) -> None:
    """Freeze the scene: every canonical signal of a window into one evidence bundle.

    Run it before anyone restarts a pod. The bundle holds the window, the same window an hour,
    a day and a week earlier, and which signals were unavailable and why.

    Example: infersight pull --prometheus http://localhost:9090 --window 1h -o incident.tar.gz
    """
    as_json = wants_json(fmt, as_json)
    from infersight.bundle import BundleError, check_target, write_bundle
    from infersight.kube.artifact import ARTIFACT, to_artifact

    try:
        length = parse_duration(since if since is not None else window)
        step_s, end = parse_duration(step), parse_at(at)
        rate_window = promql_duration(parse_duration(rate_window_opt))
        shifts = (
            []
            if baselines.strip() == "none"
            else [parse_duration(b) for b in baselines.split(",") if b.strip()]
        )
    except ValueError as exc:
        fail(str(exc), EXIT_USAGE)
    check_grid(length, step_s, end)
    try:
        check_target(out, overwrite)
    except BundleError as exc:
        fail(str(exc), EXIT_USAGE)
    conn = Connection(
        prometheus, bearer_token, basic_auth, ca_file, insecure, timeout, deadline,
        tuple(raise_limit or ()),
    )  # fmt: skip
    client, catalog, wanted = conn.client(), load_catalog(mappings or []), _signal_list(signals)
    start = end - length
    pulled = pull_windows(
        client, catalog, end, length, step_s, shifts, as_json, wanted, rate_window
    )
    windows, missing, report = pulled.windows, pulled.missing, pulled.reports
    if not windows[INCIDENT].signals:
        errors = report[INCIDENT]["errors"]
        if errors:  # the window may be fine: the queries are what failed
            also = f" (and {len(errors) - 1} other errors)" if len(errors) > 1 else ""
            fail(f"nothing written: the queries failed: {errors[0]}{also}")
        elsewhere = "" if report[INCIDENT]["attempted"] else data_elsewhere(client, catalog,
                                                                            start, end)  # fmt: skip
        if elsewhere:
            fail(f"nothing written: {elsewhere}")
        fail(
            f"no signal had data between {iso(start)} and {iso(end)}; nothing written. "
            "Check --at/--window, and `infersight probe` for what the server has"
        )
    source = {"kind": "prometheus", "url": conn.url, "rate_window": rate_window}
    if pulled.families:  # what the stack is made of: the runbooks are chosen for it
        source["families"] = ",".join(pulled.families)
    changes = cluster_changes(client, start, end, step_s, pulled.pods)
    artifacts = {ARTIFACT: to_artifact(pulled.pods, changes)} if pulled.pods or changes else None
    path = write_bundle(
        out, windows, source, missing=missing, artifacts=artifacts, overwrite=overwrite,
        queries=pulled.runs,
    )  # fmt: skip
    if as_json:
        print_json({"bundle": str(path), "windows": report})
        return
    inc = windows[INCIDENT]
    console.print(
        f"wrote [bold]{markup_safe(path)}[/]: {iso(start)} → {iso(end)} every {step}, "
        f"{len(inc.signals)} signals × {len(inc.instances)} instances, {inc.points()} points; "
        f"baselines: {', '.join(n for n in windows if n != INCIDENT) or 'none'}; "
        f"{sum(r['queries'] for r in report.values())} HTTP queries"
    )
    if missing:
        err_console.print(
            f"{len(missing)} signals unavailable "
            f"(see `infersight bundle inspect {markup_safe(path)}`)"
        )
