"""The metrics of a capture: every catalog signal present for the window and its baselines, and
the diagnosis of that moment."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from infersight.diagnose import Diagnosis, KnowledgeBase, Topology
from infersight.exporters import Catalog
from infersight.frame import MetricFrame, grid
from infersight.provenance import QueryRun
from infersight.sources.prometheus import PrometheusClient
from infersight.windows import INCIDENT, baseline_name


@dataclass
class Pulled:
    """Filled in by `pull_all` as it goes, so a timed-out pull still leaves what it got."""

    windows: dict[str, MetricFrame] = field(default_factory=dict)
    missing: dict[str, str] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    #: per window kept: the queries its series came from, as sent
    runs: dict[str, tuple[QueryRun, ...]] = field(default_factory=dict)
    #: the exporter families that fed the incident window (the runbooks are chosen for them)
    families: list[str] = field(default_factory=list)


def empty_window(end: float, length_s: float, step_s: float) -> MetricFrame:
    """The incident window's grid with no series: what a capture holds when no metric came."""
    start, n = grid(end - length_s, end, step_s)
    return MetricFrame(start, step_s, n, {})


def pull_all(
    client: PrometheusClient,
    catalog: Catalog,
    end: float,
    length_s: float,
    step_s: float,
    shifts: Sequence[float],
    rate_window: str,
    into: Pulled,
    progress: Callable[[int, int], None] | None = None,
) -> str:
    """Pull the incident window and each baseline into `into`; a one-line summary.

    A baseline the server holds no data for is left out (the detectors then say it is
    unavailable). A baseline that fails does not undo the incident window already pulled.
    """
    from infersight.sources.errors import SourceError
    from infersight.sources.pull import pull

    for name, shift in [(INCIDENT, 0.0), *((baseline_name(s), s) for s in shifts)]:
        try:
            res = pull(
                client, catalog, end - length_s - shift, end - shift, step_s, None, rate_window,
                progress if name == INCIDENT else None,
            )  # fmt: skip
        except SourceError as exc:
            if name == INCIDENT:
                raise
            into.errors.append(f"{name}: {exc}")
            continue
        if name == INCIDENT:
            into.windows[name], into.missing = res.frame, dict(res.missing)
            into.runs[name] = res.runs
            into.families = res.families
            if res.all_failed:
                raise RuntimeError(f"every query failed, e.g. {res.errors[0]}")
        elif res.frame.signals:
            into.windows[name] = res.frame
            into.runs[name] = res.runs
    inc = into.windows[INCIDENT]
    base = [n for n in into.windows if n != INCIDENT]
    return (
        f"{len(inc.signals)} signals, {len(inc.instances)} instances; "
        f"baselines: {', '.join(base) or 'none with data'}"
    )


def diagnose_moment(
    windows: Mapping[str, MetricFrame],
    missing: Mapping[str, str],
    at: float | None,
    source: Mapping[str, str],
    kb: KnowledgeBase | None = None,
    queries: Sequence[QueryRun] = (),
    topology: Topology | None = None,
) -> Diagnosis:
    """The diagnosis of the windows, or a not-judged one saying why when nothing was readable;
    `queries`: those the incident window's series came from, which its reports quote."""
    from infersight import coverage
    from infersight.diagnose import diagnose, load_kb

    cov = coverage.assess(windows, missing, at)
    if not cov.judged:
        result = coverage.unjudged(windows, cov, missing, source)
    else:
        result = diagnose(
            dict(windows), kb=kb or load_kb(), at=at, source=dict(source), topology=topology
        )
        result = coverage.apply(result, cov)
    return replace(result, queries_run=tuple(queries))
