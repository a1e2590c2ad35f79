"""Where an analysis reads its windows from: a bundle, or a live server pulled on the spot."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from infersight.cli.common import EXIT_USAGE, cannot_judge, fail, progress_bar
from infersight.cli.connection import Connection
from infersight.frame import MetricFrame
from infersight.timeparse import iso, parse_duration, parse_time, promql_duration
from infersight.windows import DEFAULT_BASELINES, INCIDENT, baseline_name

if TYPE_CHECKING:
    from infersight.exporters import Catalog
    from infersight.sources.prometheus import PrometheusClient

BundleArg = Annotated[
    Path | None,
    typer.Argument(help="An evidence bundle (from `pull`, `bundle import` or `lab sim`)."),
]
PrometheusOptional = Annotated[
    str | None,
    typer.Option(
        "--prometheus",
        "-p",
        help="Read live from this Prometheus-compatible server instead of a bundle.",
        envvar="INFERSIGHT_PROMETHEUS",
    ),
]
AtOpt = Annotated[
    str | None,
    typer.Option(
        "--at",
        help="The moment of interest (an alert): now, now-2h, epoch or ISO 8601. "
        "Default: the end of the window.",
    ),
]
WindowOpt = Annotated[
    str, typer.Option("--window", help="Length of the window analysed (live servers).")
]


#: more grid points than this in one window is a typo in --step, not an analysis
MAX_GRID_POINTS = 100_000
#: how far past the clock --at may be (clock skew between this machine and the server)
FUTURE_SLACK_S = 300.0


def check_grid(length_s: float, step_s: float, end: float) -> None:
    """Refuse a window that cannot be analysed, before any query is sent."""
    if step_s >= length_s:
        fail(f"--step {step_s:g}s is not shorter than the window ({length_s:g}s)", EXIT_USAGE)
    if length_s / step_s > MAX_GRID_POINTS:
        fail(
            f"{length_s / step_s:,.0f} points per series is too many; use a larger --step "
            f"(at most {MAX_GRID_POINTS:,} points: --step {length_s / MAX_GRID_POINTS:g}s)",
            EXIT_USAGE,
        )
    if end > parse_time("now") + FUTURE_SLACK_S:
        fail(f"--at {iso(end)} is in the future; use now or an earlier time", EXIT_USAGE)


@dataclass(frozen=True)
class Inputs:
    windows: dict[str, MetricFrame]
    source: dict[str, str]
    missing: dict[str, str]
    at: float | None


def gather(
    bundle: Path | None,
    conn: Connection | None,
    at: str | None,
    window: str,
    quiet: bool,
    mappings: list[Path] | None = None,
    raise_limit: list[str] | None = None,
) -> Inputs:
    """Windows (incident + baselines) from exactly one of a bundle or a live server."""
    if (bundle is None) == (conn is None):
        fail("give either a BUNDLE or --prometheus URL (exactly one)", EXIT_USAGE)
    try:
        at_s = parse_time(at) if at is not None else None
        length = parse_duration(window)
    except ValueError as exc:
        fail(str(exc), EXIT_USAGE)
    if bundle is not None:
        from infersight.bundle import BundleError, read_bundle
        from infersight.limits import LimitError, current

        try:
            b = read_bundle(bundle, current(raise_limit or ()))
        except (BundleError, LimitError) as exc:
            fail(str(exc))
        frame = b.frame
        if at_s is not None and not frame.start <= at_s <= frame.end + frame.step:
            fail(
                f"--at {iso(at_s)} lies outside the bundle's window "
                f"{iso(frame.start)} → {iso(frame.end)}",
                EXIT_USAGE,
            )
        return Inputs(dict(b.windows), dict(b.manifest.source), dict(b.missing), at_s)
    assert conn is not None
    from infersight.exporters import load_catalog
    from infersight.sources.errors import SourceError

    client, catalog = conn.client(), load_catalog(mappings or [])
    end = at_s if at_s is not None else parse_time("now")
    check_grid(length, 15.0, end)
    try:
        pulled = pull_windows(client, catalog, end, length, 15.0, DEFAULT_BASELINES, quiet)
    except SourceError as exc:
        if exc.retryable:  # unreachable, timed out, failing: no data, so no verdict either
            cannot_judge(str(exc))
        raise
    source = {"kind": "prometheus", "url": conn.url, "window": promql_duration(length)}
    return Inputs(pulled.windows, source, pulled.missing, at_s)


@dataclass(frozen=True)
class Pulled:
    windows: dict[str, MetricFrame]
    missing: dict[str, str]  # of the incident window
    reports: dict[str, dict[str, Any]]  # per window: PullResult.to_dict()


def pull_windows(
    client: PrometheusClient,
    catalog: Catalog,
    end: float,
    length: float,
    step: float,
    shifts: Sequence[float],
    quiet: bool,
    signals: list[str] | None = None,
    rate_window: str = "5m",
) -> Pulled:
    """The incident window ending at `end` and the same window shifted back by each shift.

    A baseline the server has no data for (not that much history) is left out, so the
    detectors say it is unavailable instead of reading an empty window.
    """
    from infersight.sources.pull import pull

    windows: dict[str, MetricFrame] = {}
    reports: dict[str, dict[str, Any]] = {}
    missing: dict[str, str] = {}
    for name, shift in [(INCIDENT, 0.0), *((baseline_name(s), s) for s in shifts)]:
        with progress_bar(f"pulling {name}", enabled=not quiet) as update:
            res = pull(
                client, catalog, end - length - shift, end - shift, step, signals, rate_window,
                update,
            )  # fmt: skip
        reports[name] = res.to_dict()
        if name == INCIDENT:
            windows[name], missing = res.frame, dict(res.missing)
        elif res.frame.signals:
            windows[name] = res.frame
    return Pulled(windows, missing, reports)
