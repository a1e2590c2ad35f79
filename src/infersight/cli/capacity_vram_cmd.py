"""`infersight capacity vram`: GPU memory headroom from history (seed §3.2), from a bundle or
a live Prometheus; registered on the `capacity` group by `capacity_cmds.py`."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table

from infersight.cli.common import (
    EXIT_CANNOT_JUDGE,
    EXIT_FINDINGS,
    EXIT_USAGE,
    FormatOpt,
    JsonAliasOpt,
    console,
    err_console,
    fail,
    markup_safe,
    print_json,
    progress_bar,
    wants_json,
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
from infersight.cli.inputs import AT_HELP, FUTURE_SLACK_S, BundleArg, PrometheusOptional, parse_at


def vram(
    bundle: BundleArg = None,
    prometheus: PrometheusOptional = None,
    days: Annotated[
        float, typer.Option("--days", help="History to read (live servers).", min=0.01)
    ] = 7.0,
    step: Annotated[
        str,
        typer.Option("--step", help="Resolution of the history (live).", metavar="DURATION"),
    ] = "5m",
    at: Annotated[
        str | None,
        typer.Option(
            "--at",
            help="The end of the history read: " + AT_HELP + " Default: now (live), the end of "
            "the bundle.",
            metavar="TIME",
        ),
    ] = None,
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
    """Steady and peak VRAM per instance, the headroom left at the peak against 20–30%
    (seed §3.2), and the instances at risk with the dates of their peaks.

    Exit 0 when every instance keeps its headroom, 1 when one is at risk, 3 when none reports VRAM.

    Examples:
      infersight capacity vram -p http://prometheus:9090 --days 7
      infersight capacity vram -p http://prometheus:9090 --days 7 --at 2026-12-01T00:00Z
      infersight capacity vram incident.tar.gz
    """
    as_json = wants_json(fmt, as_json)
    from infersight.capacity import DEFAULT_CONFIG
    from infersight.capacity.vram import SIGNALS, vram_report
    from infersight.timeparse import iso, parse_duration

    if (bundle is None) == (prometheus is None):
        fail("give either a BUNDLE or --prometheus URL (exactly one)", EXIT_USAGE)
    if bundle is not None:
        from infersight.bundle import BundleError, read_bundle
        from infersight.limits import LimitError, current

        try:
            frame = read_bundle(bundle, current(raise_limit or ())).frame
        except (BundleError, LimitError) as exc:
            fail(str(exc))
        if at is not None:  # the bundle's history up to that moment
            try:
                until = parse_at(at, anchor=frame.end + frame.step)
            except ValueError as exc:
                fail(f"--at: {exc}", EXIT_USAGE)
            if not frame.start <= until <= frame.end + frame.step:
                fail(
                    f"--at {iso(until)} lies outside the bundle's window "
                    f"{iso(frame.start)} → {iso(frame.end)}",
                    EXIT_USAGE,
                )
            frame = frame.slice_time(frame.start, until)
    else:
        from infersight.cli.connection import Connection
        from infersight.exporters import load_catalog
        from infersight.limits import LimitError, LimitExceeded, current
        from infersight.sources.pull import pull
        from infersight.timeparse import parse_time

        try:
            step_s = parse_duration(step)
            end = parse_at(at) if at is not None else parse_time("now")
        except ValueError as exc:
            fail(f"--step/--at: {exc}", EXIT_USAGE)
        if end > parse_time("now") + FUTURE_SLACK_S:
            fail(f"--at {iso(end)} is in the future; use now or an earlier time", EXIT_USAGE)
        try:  # the history's grid, refused before a query is sent
            points = int(days * 86400.0 / step_s) + 1
            current(raise_limit or ()).check_grid(points, 1, f"--days {days:g} at --step {step}")
        except (LimitError, LimitExceeded) as exc:
            fail(str(exc), EXIT_USAGE)
        assert prometheus is not None
        conn = Connection(
            prometheus, bearer_token, basic_auth, ca_file, insecure, timeout, deadline,
            tuple(raise_limit or ()),
        )  # fmt: skip
        with progress_bar("pulling VRAM history", enabled=not as_json) as update:
            frame = pull(
                conn.client(), load_catalog([]), end - days * 86400.0, end, step_s, list(SIGNALS),
                "5m", update,
            ).frame  # fmt: skip
    from infersight.cli.inputs import readable_windows

    rows = vram_report(readable_windows({"incident": frame})["incident"], DEFAULT_CONFIG)

    def pct(v: float | None, card: float | None = None) -> str:
        if v is None:
            return "—"
        return f"{v:.0%}" if card is None else f"{v:.0%} ({v * card / 2**30:.1f} GiB)"

    if as_json:
        print_json({"instances": [r.to_dict() for r in rows]})
    else:
        table = Table(title="VRAM headroom (seed §3.2: keep 20–30% free at the peak)")
        for col in (
            "instance",
            "status",
            "steady",
            "peak",
            "free at peak",
            "peak at",
            "risky days",
        ):
            table.add_column(col)
        for r in rows:
            table.add_row(
                markup_safe(r.instance), r.status, pct(r.steady, r.card), pct(r.peak, r.card),
                pct(r.headroom),
                "—" if r.peak_at is None else iso(r.peak_at),
                ", ".join(iso(t)[:10] for t, _ in r.risky_days) or "—",
            )  # fmt: skip
        console.print(table)
    if not rows or all(r.status == "missing" for r in rows):
        err_console.print("no instance reports GPU memory: headroom unknown, not safe")
        raise typer.Exit(EXIT_CANNOT_JUDGE)
    if any(r.status == "at_risk" for r in rows):
        raise typer.Exit(EXIT_FINDINGS)
