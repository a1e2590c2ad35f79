"""Where an analysis reads its windows from: a bundle, or a live server pulled on the spot."""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from infersight.cli.common import (
    EXIT_USAGE,
    cannot_judge,
    err_console,
    fail,
    markup_safe,
    progress_bar,
)
from infersight.cli.connection import Connection
from infersight.frame import MetricFrame
from infersight.kube.changes import ClusterChange
from infersight.kube.pods import PodMap
from infersight.provenance import QueryRun
from infersight.timeparse import iso, parse_duration, parse_time, promql_duration
from infersight.windows import DEFAULT_BASELINES, INCIDENT, baseline_name

if TYPE_CHECKING:
    from infersight.bundle import Bundle
    from infersight.coverage import Coverage
    from infersight.exporters import Catalog
    from infersight.sources.prometheus import PrometheusClient

BundleArg = Annotated[
    Path | None,
    typer.Argument(help="An evidence bundle (from `pull`, `bundle import` or `lab sim`)."),
]
PROMETHEUS_ENV = "INFERSIGHT_PROMETHEUS"
PrometheusOptional = Annotated[
    str | None,
    typer.Option(
        "--prometheus",
        "-p",
        help=f"Read live from this Prometheus-compatible server instead of a bundle (with no "
        f"BUNDLE, ${PROMETHEUS_ENV} is used when set).",
        metavar="URL",
    ),
]
AT_HELP = (
    "The moment of interest (an alert): HH:MM[Z] (UTC; today, or yesterday when that is still "
    "to come; in a bundle, the last such time in it), now, now-2h, epoch or ISO 8601."
)
AtOpt = Annotated[
    str | None,
    typer.Option("--at", help=AT_HELP + " Default: the end of the window.", metavar="TIME"),
]
WindowOpt = Annotated[
    str,
    typer.Option(
        "--window",
        help="Length of the window analysed, with its unit: 30m, 1h (live servers).",
        metavar="DURATION",
    ),
]
StepOpt = Annotated[
    str,
    typer.Option(
        "--step",
        help=(
            "Resolution of the time grid in a --prometheus pull: 15s. A window of a few "
            "minutes scraped every 5 s reads best at 5s (a 15 s grid leaves a 1 min baseline "
            "4 points); never finer than the scrape interval."
        ),
        metavar="DURATION",
    ),
]
RateWindowOpt = Annotated[
    str,
    typer.Option(
        "--rate-window",
        help=(
            "Window of rate() and histogram_quantile() in a --prometheus pull: 5m. Shorten it "
            "for an incident of a few minutes (a 5m rate spreads a 2 min fault over 5 min and "
            "blurs which signal moved first); keep it at least 4 scrape intervals."
        ),
        metavar="DURATION",
    ),
]

_CLOCK = re.compile(r"^([01]?\d|2[0-3]):([0-5]\d)(?::([0-5]\d))?Z?$", re.IGNORECASE)
DAY_S = 86400.0


def parse_at(text: str, anchor: float | None = None) -> float:
    """`--at` as epoch seconds. A clock time HH:MM[:SS][Z] (UTC) is the last such moment no
    later than `anchor` (now, with a few minutes' slack for clock skew: today, or yesterday
    when today's is still to come); anything else as `timeparse.parse_time` reads it."""
    m = _CLOCK.match(text.strip())
    if m is None:
        return parse_time(text)
    limit = anchor if anchor is not None else parse_time("now") + FUTURE_SLACK_S
    day = datetime.fromtimestamp(limit, tz=UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    h, mi, sec = int(m.group(1)), int(m.group(2)), int(m.group(3) or 0)
    moment = day.timestamp() + h * 3600 + mi * 60 + sec
    return moment if moment <= limit else moment - DAY_S


def prometheus_or_env(bundle: Path | None, prometheus: str | None) -> str | None:
    """The server to read: `--prometheus`, else $INFERSIGHT_PROMETHEUS when no bundle is given
    (a variable set for other commands never turns a bundle's analysis into a usage error)."""
    if prometheus is not None or bundle is not None:
        return prometheus
    return os.environ.get(PROMETHEUS_ENV) or None


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
    #: the queries the incident window's series came from (() when no record: a simulator's
    #: bundle, one written before the record)
    queries: tuple[QueryRun, ...] = ()
    #: why the window holds nothing when the server holds data at other times ("" otherwise)
    empty: str = ""
    #: the pods kube-state-metrics placed on nodes, and what changed in the cluster
    pods: PodMap = field(default_factory=PodMap)
    changes: tuple[ClusterChange, ...] = ()


def coverage_of(inputs: Inputs) -> Coverage:
    """What the windows let be judged; an empty window of a server that holds data at other
    times says so, with the newest sample's time, instead of "no known exporter"."""
    from infersight.coverage import assess

    cov = assess(inputs.windows, inputs.missing, inputs.at)
    if not cov.judged and inputs.empty:
        return dataclasses.replace(cov, reason=inputs.empty)
    return cov


def data_elsewhere(client: PrometheusClient, catalog: Catalog, start: float, end: float) -> str:
    """Why the window start → end holds no known exporter's metric when the server holds some
    at other times: which families, when their newest sample is and the `--at` to use; ""
    when the server holds none at all (or cannot say)."""
    from infersight.sources.errors import SourceError
    from infersight.sources.newest import data_elsewhere as find

    try:
        where = find(client, catalog, parse_time("now"))
    except SourceError:
        return ""  # the window's own answer stands
    if where is None:
        return ""
    families = ", ".join(where.families)
    head = (
        f"no known exporter's metric has a sample in the window {iso(start)} → {iso(end)}, "
        f"but the server holds {len(where.families)} known families at other times ({families})"
    )
    if where.newest is None:
        days = where.searched_s / DAY_S
        return f"{head}, none with a sample in the last {days:.0f} days: check its retention"
    after = " (after the window)" if where.newest > end else ""
    return (
        f"{head}; the newest sample is at {iso(where.newest)}{after}: try --at {iso(where.newest)}"
    )


def gather(
    bundle: Path | None,
    conn: Connection | None,
    at: str | None,
    window: str,
    quiet: bool,
    mappings: list[Path] | None = None,
    raise_limit: list[str] | None = None,
    rate_window: str = "5m",
    step: str = "15s",
) -> Inputs:
    """Windows (incident + baselines) from exactly one of a bundle or a live server."""
    if (bundle is None) == (conn is None):
        fail("give either a BUNDLE or --prometheus URL (exactly one)", EXIT_USAGE)
    try:
        at_s = parse_at(at) if at is not None and bundle is None else None
        length = parse_duration(window)
    except ValueError as exc:
        fail(f"--at/--window: {exc}", EXIT_USAGE)
    try:
        rate_s = parse_duration(rate_window)
    except ValueError as exc:
        fail(f"--rate-window: {exc}", EXIT_USAGE)
    try:
        step_s = parse_duration(step)
    except ValueError as exc:
        fail(f"--step: {exc}", EXIT_USAGE)
    if bundle is not None and step != "15s":
        fail("--step applies to a --prometheus pull; a bundle's grid is already in it",
             EXIT_USAGE)  # fmt: skip
    if bundle is not None and rate_window != "5m":
        fail("--rate-window applies to a --prometheus pull; a bundle's rates are already in it",
             EXIT_USAGE)  # fmt: skip
    if bundle is not None and mappings:
        fail("--mappings applies to a --prometheus pull; a bundle's series are already mapped",
             EXIT_USAGE)  # fmt: skip
    if bundle is not None:
        from infersight.bundle import BundleError, read_bundle
        from infersight.limits import LimitError, current

        try:
            b = read_bundle(bundle, current(raise_limit or ()))
        except (BundleError, LimitError) as exc:
            fail(str(exc))
        frame = b.frame
        if at is not None:
            try:
                at_s = parse_at(at, anchor=frame.end + frame.step)
            except ValueError as exc:
                fail(f"--at: {exc}", EXIT_USAGE)
        if at_s is not None and not frame.start <= at_s <= frame.end + frame.step:
            fail(
                f"--at {iso(at_s)} lies outside the bundle's window "
                f"{iso(frame.start)} → {iso(frame.end)}",
                EXIT_USAGE,
            )
        pods, changes = _bundled_cluster(b)
        return Inputs(
            readable_windows(b.windows), dict(b.manifest.source), dict(b.missing), at_s, b.runs,
            "", pods, changes,
        )  # fmt: skip
    assert conn is not None
    from infersight.exporters import load_catalog
    from infersight.sources.errors import SourceError

    client, catalog = conn.client(), load_catalog(mappings or [])
    end = at_s if at_s is not None else parse_time("now")
    check_grid(length, step_s, end)
    try:
        pulled = pull_windows(
            client, catalog, end, length, step_s, DEFAULT_BASELINES, quiet, None,
            promql_duration(rate_s),
        )  # fmt: skip
    except SourceError as exc:
        if exc.retryable:  # unreachable, timed out, failing: no data, so no verdict either
            cannot_judge(str(exc))
        raise
    source = {
        "kind": "prometheus",
        "url": conn.url,
        "window": promql_duration(length),
        "rate_window": promql_duration(rate_s),
    }
    if pulled.families:  # what the stack is made of: the runbooks are chosen for it
        source["families"] = ",".join(pulled.families)
    empty = ""
    if not pulled.windows[INCIDENT].signals and not pulled.reports[INCIDENT]["attempted"]:
        empty = data_elsewhere(client, catalog, end - length, end)
    changes = cluster_changes(client, end - length, end, step_s, pulled.pods)
    return Inputs(
        readable_windows(pulled.windows),
        source,
        pulled.missing,
        at_s,
        pulled.runs.get(INCIDENT, ()),
        empty,
        pulled.pods,
        changes,
    )


def cluster_changes(
    client: PrometheusClient, start: float, end: float, step: float, pods: PodMap
) -> tuple[ClusterChange, ...]:
    """What changed in the cluster in the window; where it cannot be read, one line says why
    and the report has no such section (never an empty one that reads as "nothing changed")."""
    from infersight.kube.read import from_prometheus
    from infersight.sources.errors import SourceError

    if not pods:  # the pull found no kube_pod_info: no cluster, and no query to ask it
        return ()
    try:
        return tuple(from_prometheus(client, start, end, step, pods))
    except SourceError as exc:
        err_console.print(
            f"[yellow]note:[/] the cluster's changes could not be read: {markup_safe(str(exc))}",
            highlight=False,
            soft_wrap=True,
        )
        return ()


def _bundled_cluster(b: Bundle) -> tuple[PodMap, tuple[ClusterChange, ...]]:
    """The cluster record a bundle holds (none: no pods, no changes)."""
    from infersight.kube.artifact import ARTIFACT, from_artifact

    if ARTIFACT not in b.artifact_names():
        return PodMap(), ()
    try:
        return from_artifact(b.read_artifact(ARTIFACT))
    except ValueError as exc:
        fail(f"{b.path}: {exc}")


def readable_windows(windows: Mapping[str, MetricFrame]) -> dict[str, MetricFrame]:
    """The windows with readings no metric reaches (±Inf, ±1e308) as gaps, said in one line."""
    from infersight.readings import note, readable

    out, dropped = readable(windows)
    if dropped:
        err_console.print(
            f"[yellow]note:[/] {markup_safe(note(dropped))}", highlight=False, soft_wrap=True
        )
    return out


@dataclass(frozen=True)
class Pulled:
    windows: dict[str, MetricFrame]
    missing: dict[str, str]  # of the incident window
    reports: dict[str, dict[str, Any]]  # per window: PullResult.to_dict()
    #: per window kept: the queries its series came from (`PullResult.runs`)
    runs: dict[str, tuple[QueryRun, ...]] = field(default_factory=dict)
    families: tuple[str, ...] = ()  # the exporter families that fed the incident window
    pods: PodMap = field(default_factory=PodMap)  # placed in the incident window


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
    runs: dict[str, tuple[QueryRun, ...]] = {}
    families: tuple[str, ...] = ()
    pods = PodMap()
    for name, shift in [(INCIDENT, 0.0), *((baseline_name(s), s) for s in shifts)]:
        with progress_bar(f"pulling {name}", enabled=not quiet) as update:
            res = pull(
                client, catalog, end - length - shift, end - shift, step, signals, rate_window,
                update,
            )  # fmt: skip
        reports[name] = res.to_dict()
        if name == INCIDENT:
            windows[name], missing = res.frame, dict(res.missing)
            runs[name] = res.runs
            families = tuple(res.families)
            pods = res.pods
        elif res.frame.signals:
            windows[name] = res.frame
            runs[name] = res.runs
    return Pulled(windows, missing, reports, runs, families, pods)
