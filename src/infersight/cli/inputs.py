"""Where an analysis reads its windows from: a bundle, or a live server pulled on the spot."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import typer

from infersight.cli.common import EXIT_USAGE, fail, progress_bar
from infersight.cli.connection import Connection
from infersight.frame import MetricFrame
from infersight.timeparse import iso, parse_duration, parse_time, promql_duration
from infersight.windows import DEFAULT_BASELINES, INCIDENT, baseline_name

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
        from infersight.bundle import read_bundle

        b = read_bundle(bundle)
        frame = b.frame
        if at_s is not None and not frame.start <= at_s <= frame.end + frame.step:
            fail(
                f"--at {iso(at_s)} lies outside the bundle's window "
                f"{iso(frame.start)} → {iso(frame.end)}",
                EXIT_USAGE,
            )
        return Inputs(dict(b.windows), dict(b.manifest.source), dict(b.missing), at_s)
    assert conn is not None
    from infersight.cli.pull_cmds import check_grid
    from infersight.exporters import load_catalog
    from infersight.sources.pull import pull

    client, catalog = conn.client(), load_catalog(mappings or [])
    end = at_s if at_s is not None else parse_time("now")
    check_grid(length, 15.0, end)
    windows: dict[str, MetricFrame] = {}
    missing: dict[str, str] = {}
    for name, shift in [(INCIDENT, 0.0), *((baseline_name(s), s) for s in DEFAULT_BASELINES)]:
        with progress_bar(f"pulling {name}", enabled=not quiet) as update:
            res = pull(client, catalog, end - length - shift, end - shift, 15.0, None, "5m", update)
        if name == INCIDENT:
            windows[name], missing = res.frame, dict(res.missing)
        elif res.frame.signals:  # a server without that much history: no such baseline
            windows[name] = res.frame
    source = {"kind": "prometheus", "url": conn.url, "window": promql_duration(length)}
    return Inputs(windows, source, missing, at_s)
