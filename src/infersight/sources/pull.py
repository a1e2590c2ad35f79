"""Pull canonical signals from a Prometheus-compatible server into a MetricFrame.

One range query per (signal, exporter family present): the catalog's PromQL already aggregates
`by` the identity labels, so a fleet of a hundred instances costs the same number of queries as
one. Returned series are mapped to instance identities (`identity.resolve`); several series of
one identity merge with the signal's `combine`; where two families cover one identity, the
higher-priority family wins. A signal that fails is reported missing with the reason; a server
that cannot be reached (or refuses the credentials), or a command deadline that ran out, stops
the pull. `PullResult.errors` keeps the failures met, so that a pull where every query failed
says why instead of "no data". `PullResult.runs` records, per signal, the query of each family
whose series it holds, exactly as sent (`provenance.QueryRun`): what the reports quote.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from infersight.exporters import DEFAULT_WINDOW, IDENTITY_LABELS, Catalog, SignalMapping
from infersight.frame import FloatArray, MetricFrame, SignalSeries, grid
from infersight.kube.pods import PLACED_BEFORE_S, POD_INFO, POD_INFO_LABELS, PodMap
from infersight.provenance import QueryRun, runs_of
from infersight.signals import get_signal
from infersight.sources.errors import AuthError, DeadlineExceeded, ServerUnreachable, SourceError
from infersight.sources.merge import first_family_wins, rows_by_identity
from infersight.sources.plan import plan_signals
from infersight.sources.prometheus import PrometheusClient
from infersight.sources.promseries import Series

Progress = Callable[[int, int], None]
_FATAL = (ServerUnreachable, AuthError, DeadlineExceeded)


@dataclass(frozen=True)
class PullResult:
    frame: MetricFrame
    missing: dict[str, str]  # signal -> why it has no data
    queries: int  # HTTP requests made, retries included
    per_signal_source: dict[str, str] = field(default_factory=dict)  # signal -> family(ies)
    errors: tuple[str, ...] = ()  # the distinct query failures met, in the order first met
    attempted: int = 0  # range queries sent (one per signal and family present)
    #: per signal, the query of each family its series came from, as sent (best family first)
    runs: tuple[QueryRun, ...] = ()
    #: the pods kube-state-metrics placed on nodes (empty off Kubernetes)
    pods: PodMap = field(default_factory=PodMap)

    def to_dict(self) -> dict[str, Any]:
        return {
            "start": self.frame.start,
            "step": self.frame.step,
            "n": self.frame.n,
            "signals": self.frame.signals,
            "instances": self.frame.instances,
            "points": self.frame.points(),
            "missing": dict(self.missing),
            "queries": self.queries,
            "per_signal_source": dict(self.per_signal_source),
            "errors": list(self.errors),
            "attempted": self.attempted,
            "runs": [vars(r) for r in self.runs],
            "pods": self.pods.to_dict(),
        }

    @property
    def families(self) -> list[str]:
        """The exporter families whose series fed the frame, in the order first used."""
        used = (f for fams in self.per_signal_source.values() for f in fams.split(","))
        return list(dict.fromkeys(f for f in used if f))

    @property
    def all_failed(self) -> bool:
        """Every query sent failed: the missing data says nothing about the window."""
        return self.attempted > 0 and not self.frame.signals and bool(self.errors)


def on_grid(s: Series, start: float, step: float, n: int) -> FloatArray:
    """A returned series placed on the grid; points off it (beyond float drift) are dropped."""
    row = np.full(n, np.nan)
    pos = (s.ts - start) / step
    idx = np.rint(pos).astype(np.int64)
    ok = (np.abs(pos - idx) < 1e-3) & (idx >= 0) & (idx < n)
    row[idx[ok]] = s.values[ok]
    return row


async def apull(
    client: PrometheusClient,
    catalog: Catalog,
    start: float,
    end: float,
    step: float,
    signals: Iterable[str] | None = None,
    window: str = DEFAULT_WINDOW,
    progress: Progress | None = None,
) -> PullResult:
    # the HTTP API speaks milliseconds: a grid on finer times would miss every returned point
    start, end = round(start, 3), round(end, 3)
    async with client:
        before = client.requests
        g_start, n = grid(start, end, step)
        names = set(await client.ametric_names(start, end))
        pods, pod_error = await _pods(client, names, g_start, end, step)
        plans = plan_signals(catalog, names, signals)
        missing = {s: p.reason for s, p in plans.items() if not p.available}
        jobs = [m for p in plans.values() for m in p.mappings]
        results: dict[tuple[str, str], list[Series] | SourceError] = {}
        done = 0
        if progress:
            progress(0, len(jobs))

        async def run(m: SignalMapping) -> None:
            nonlocal done
            expr = m.render(window, by=IDENTITY_LABELS)
            try:
                results[m.signal, m.family] = await client.aquery_range(expr, g_start, end, step)
            except _FATAL:
                raise
            except SourceError as exc:
                results[m.signal, m.family] = exc
            done += 1
            if progress:
                progress(done, len(jobs))

        try:
            async with asyncio.TaskGroup() as tg:
                for m in jobs:
                    tg.create_task(run(m))
        except BaseExceptionGroup as eg:
            raise eg.exceptions[0] from None

        series: dict[str, SignalSeries] = {}
        sources: dict[str, str] = {}
        runs: list[QueryRun] = []
        for sig, p in plans.items():
            rows, used, errors = _merge_families(sig, p.mappings, results, g_start, step, n, pods)
            if rows:
                idents = sorted(rows)
                series[sig] = SignalSeries(tuple(idents), np.vstack([rows[i] for i in idents]))
                sources[sig] = ",".join(used)
                runs += runs_of(p.mappings, used, window, g_start, end, step)
            elif p.available:
                missing[sig] = (
                    "; ".join(errors)
                    or "no data in the window ("
                    + ", ".join(
                        f"{m.family}: {m.render(window, by=IDENTITY_LABELS)}" for m in p.mappings
                    )
                    + ")"
                )
        frame = MetricFrame(g_start, step, n, series)
        failed = tuple(
            dict.fromkeys(
                [pod_error] * bool(pod_error)
                + [str(r) for r in results.values() if isinstance(r, SourceError)]
            )
        )
        return PullResult(
            frame, missing, client.requests - before, sources, failed, len(jobs), tuple(runs),
            pods,
        )  # fmt: skip


#: kube-state-metrics scraped without `honorLabels` renames its `pod` and `namespace`
_POD_INFO_EXPR = "group by ({}) ({})".format(
    ", ".join((*POD_INFO_LABELS, "exported_pod", "exported_namespace")), POD_INFO
)


async def _pods(
    client: PrometheusClient, names: set[str], start: float, end: float, step: float
) -> tuple[PodMap, str]:
    """Where each pod ran in the window (`kube/pods.py`), and why not where the query failed:
    the series are then read on their own labels, and the failure is among the pull's errors."""
    if POD_INFO not in names:
        return PodMap(), ""
    try:
        # a pod that ended shortly before the window still has samples in its ranges
        found = await client.aquery_range(_POD_INFO_EXPR, start - PLACED_BEFORE_S, end, step)
    except _FATAL:
        raise
    except SourceError as exc:
        return PodMap(), f"{POD_INFO} (which pod runs on which node): {exc}"
    return PodMap.from_labels(s.labels for s in found), ""


def _merge_families(
    sig: str,
    mappings: tuple[SignalMapping, ...],
    results: dict[tuple[str, str], list[Series] | SourceError],
    start: float,
    step: float,
    n: int,
    pods: PodMap,
) -> tuple[dict[str, FloatArray], list[str], list[str]]:
    """Rows per identity, best family first; the families used; the errors met."""
    how = get_signal(sig).combine
    errors = [
        f"{m.family}: {r}"
        for m in mappings
        if isinstance(r := results.get((sig, m.family)), SourceError)
    ]
    per_family = []
    for m in mappings:
        res = results.get((sig, m.family))
        if isinstance(res, list):
            labelled = ((s.labels, on_grid(s, start, step, n)) for s in res)
            if pods:
                per_family.append((m.family, rows_by_identity(labelled, how, pods.identity)))
            else:
                per_family.append((m.family, rows_by_identity(labelled, how)))
    rows, used = first_family_wins(per_family)
    return rows, used, errors


def pull(
    client: PrometheusClient,
    catalog: Catalog,
    start: float,
    end: float,
    step: float,
    signals: Iterable[str] | None = None,
    window: str = DEFAULT_WINDOW,
    progress: Progress | None = None,
) -> PullResult:
    """Sync facade of `apull`, for the CLI."""
    return client.run(lambda: apull(client, catalog, start, end, step, signals, window, progress))
