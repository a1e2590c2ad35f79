"""`infersight capture`: freeze the scene into one evidence bundle before anyone acts."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

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
    resolve_deadline,
)
from infersight.cli.exit_codes import verdict
from infersight.cli.inputs import AT_HELP, PrometheusOptional, parse_at


def capture(
    out: Annotated[
        Path, typer.Option("--out", "-o", help="Bundle to write: NAME.tar.gz, or a directory.")
    ],
    prometheus: PrometheusOptional = None,
    since: Annotated[
        str,
        typer.Option(
            "--window",
            "--since",  # the old name, as in `pull`
            help="Length of the metrics window, ending at --at: 30m, 1h.",
            metavar="DURATION",
        ),
    ] = "30m",
    at: Annotated[
        str, typer.Option("--at", help="The moment to capture. " + AT_HELP, metavar="TIME")
    ] = "now",
    step: Annotated[
        str, typer.Option("--step", help="Resolution of the time grid.", metavar="DURATION")
    ] = "15s",
    rate_window: Annotated[
        str | None,
        typer.Option(
            "--rate-window",
            help="Window of rate() and histogram_quantile(): 1m for a fault of a few minutes "
            "(a 5m rate spreads it over five); keep it at least 4 scrape intervals. Default: "
            "5m, or the whole window when shorter. The bundle keeps the rates as read.",
            metavar="DURATION",
        ),
    ] = None,
    baselines: Annotated[
        str,
        typer.Option(
            "--baselines",
            metavar="DURATIONS",
            help="Also pull the window shifted back by each of these, for the detectors' "
            "baselines; `none` to skip.",
        ),
    ] = "1h,1d,7d",
    pid: Annotated[
        list[int] | None,
        typer.Option("--pid", help="Dump the thread stacks of this process (py-spy); repeatable."),
    ] = None,
    process: Annotated[
        list[str] | None,
        typer.Option(
            "--process",
            help="Dump the thread stacks of every process of this name (its command name or a "
            "script's file name); repeatable.",
        ),
    ] = None,
    no_native: Annotated[
        bool, typer.Option("--no-native", help="Python frames only (no C/C++ frames).")
    ] = False,
    log: Annotated[
        list[Path] | None,
        typer.Option(
            "--log", help="Keep the tail of this log file (and its rotated .1); repeatable."
        ),
    ] = None,
    log_bytes: Annotated[
        str, typer.Option("--log-bytes", help="At most this much of each log (e.g. 1MiB).")
    ] = "1MiB",
    gpu: Annotated[
        bool, typer.Option("--gpu", help="Keep nvidia-smi -q and Xid lines (or note no GPU).")
    ] = False,
    part_timeout: Annotated[
        str,
        typer.Option(
            "--part-timeout",
            help="Time each part (stacks, logs, GPU, ...) may take at most.",
            metavar="DURATION",
        ),
    ] = "60s",
    overwrite: Annotated[
        bool, typer.Option("--overwrite", help="Replace an existing bundle.")
    ] = False,
    fmt: FormatOpt = "table",
    as_json: JsonAliasOpt = False,
    bearer_token: BearerOpt = None,
    basic_auth: BasicOpt = None,
    ca_file: CaOpt = None,
    insecure: InsecureOpt = False,
    timeout: TimeoutOpt = 30.0,
    deadline: DeadlineOpt = None,
    raise_limit: LimitOpt = None,
) -> None:
    """Freeze the scene: metrics, baselines, thread stacks, logs, GPU and host facts, and the
    diagnosis of this moment, in one evidence bundle.

    Run it before anyone restarts anything. Every part is optional and bounded in time; a part
    that fails (a hung process, a slow server, no ptrace permission) is recorded in the bundle
    and never stops the rest. The exit status is the scene's diagnosis (as `diagnose` of the
    bundle exits): 0 nothing to act on, 1 something to act on, 3 cannot judge (no metrics, or
    too little in them); the bundle is written whatever it says.

    Example: infersight capture -p http://prom:9090 --window 30m --process vllm --log
    /var/log/vllm.log --gpu -o scene.tar.gz
    """
    from infersight.bundle import BundleError, check_target
    from infersight.capture import CaptureRequest
    from infersight.capture import capture as run_capture
    from infersight.limits import LimitError, current, parse_size
    from infersight.timeparse import parse_duration, promql_duration

    as_json = wants_json(fmt, as_json)
    try:
        length, step_s, end = parse_duration(since), parse_duration(step), parse_at(at)
        rate_s = min(300.0, length) if rate_window is None else parse_duration(rate_window)
        part_s = parse_duration(part_timeout)
        shifts = (
            ()
            if baselines.strip() == "none"
            else tuple(parse_duration(b) for b in baselines.split(",") if b.strip())
        )
        max_log = parse_size(log_bytes)
        limits = current(raise_limit or ())
    except (ValueError, LimitError) as exc:
        fail(str(exc), EXIT_USAGE)
    if step_s >= length:
        fail(f"--step {step} is not shorter than --window {since}", EXIT_USAGE)
    for path in log or []:
        if not path.is_file():
            what = "not a regular file" if os.path.lexists(path) else "no such file"
            fail(f"--log {path}: {what}", EXIT_USAGE)
    try:
        check_target(out, overwrite)
    except BundleError as exc:
        fail(str(exc), EXIT_USAGE)
    settings = None
    if prometheus is not None:
        conn = Connection(
            prometheus, bearer_token, basic_auth, ca_file, insecure, timeout, deadline,
            tuple(raise_limit or ()),
        )  # fmt: skip
        conn.client()  # a bad URL or credential is a usage error now, not a failed part later
        settings = conn.settings()
    req = CaptureRequest(
        out=out,
        connection=settings,
        at=end,
        since_s=length,
        step_s=step_s,
        baselines=shifts,
        rate_window=promql_duration(rate_s),
        pids=tuple(pid or ()),
        processes=tuple(process or ()),
        native=not no_native,
        logs=tuple(log or ()),
        log_max_bytes=max_log,
        gpu=gpu,
        part_timeout_s=part_s,
        metrics_timeout_s=resolve_deadline(deadline),
        overwrite=overwrite,
        limits=limits,
    )
    total = 2 + (settings is not None) + bool(pid or process) + bool(log) + gpu
    with Progress(
        TextColumn("[bold]capture[/] {task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err_console,
        transient=True,
        disable=as_json,
    ) as bar:
        task = bar.add_task("", total=total)

        def part_done(name: str, status: str) -> None:
            bar.update(task, advance=1, description=f"{name}: {status}")

        def metrics_progress(done: int, count: int) -> None:
            bar.update(task, description=f"metrics {done}/{count} queries")

        result = run_capture(req, progress=part_done, metrics_progress=metrics_progress)
    if as_json:
        print_json(result.to_dict())
    else:
        table = Table(title=f"captured {markup_safe(result.path)}")
        for col in ("part", "status", "seconds", "note"):
            table.add_column(col, overflow="fold")
        for p in result.parts:
            colour = "green" if p.status == "ok" else "yellow" if p.status == "partial" else "red"
            table.add_row(
                p.name, f"[{colour}]{p.status}[/]", f"{p.seconds:.1f}", markup_safe(p.note)
            )
        console.print(table)
        console.print(markup_safe(result.diagnosis.summary))
    # the status is the scene's diagnosis, as `diagnose` of the bundle would exit; a part that
    # failed is in the table above, the JSON and the bundle, and decides nothing on its own
    if not result.diagnosis.judged:
        cannot_judge(result.diagnosis.summary)
    raise typer.Exit(verdict(result.diagnosis.healthy))
