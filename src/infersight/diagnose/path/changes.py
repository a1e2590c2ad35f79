"""What changed at each node of the path, with its figures and when it began.

A change is one series (a signal on an instance) that moved: a deviation or a fleet outlier
detection found, an absence (the part stopped answering or its series stopped), or a step at
the onset that detection's alerting band did not call (a third more requests on the survivors
of a lost peer, a ratio that fell by half on a quiet day). Each carries the node it belongs to
and its facet (what it measures there), which is all the walk reads.

Availability is evidence: from the moment a node stopped answering (its `up` or its
exporter's own up flag at 0, its series gone while its peers' go on) nothing it reported
before says anything of it after, so its steps are read on its readings before that moment
only, never as "unchanged".
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from infersight.detect import Anomaly
from infersight.detect.absence import ANSWERING
from infersight.detect.config import DetectConfig
from infersight.diagnose.config import MAD_TO_SIGMA
from infersight.diagnose.context import Context, row_medians
from infersight.diagnose.evidence import clock, from_anomaly
from infersight.diagnose.kb import Condition
from infersight.diagnose.path.config import PathConfig
from infersight.diagnose.path.dating import first_sign, part_way, step_start
from infersight.diagnose.path.world import HOP, World
from infersight.diagnose.result import Evidence
from infersight.diagnose.states.registry import state_on
from infersight.signals import EFFECTS, all_signals
from infersight.units import format_ratio, format_value

#: facets read as steps at the onset where detection found nothing (effects are detection's:
#: a latency that shifted a little under its band is no incident)
_STEP_FACETS = frozenset(
    {"arrivals", "sends", "input", "capacity", "process", "resource", "network", "saturation"}
)
#: client-timed against server-timed, tails against tails, means against means; the
#: gateway's own request time only where it does not time its upstream (its own time, the
#: rest, is the gateway's)
_HOP_PAIRS = (
    ("access.upstream_latency_p99", "service.e2e_latency_p99"),
    ("access.upstream_latency_avg", "service.e2e_latency_avg"),
)
_HOP_FALLBACK = (("access.request_latency_p99", "service.e2e_latency_p99"),)
#: how much more the client saw than the servers for the rest to sit in the hop
_HOP_FACTOR = 2.0
#: what a serving part reports whatever its traffic: its request counter (0/s when idle)
_COUNTS = ("service.request_rate",)


@dataclass(frozen=True)
class Change:
    node: str
    signal: str
    instance: str
    facet: str
    direction: str  # up | down
    onset: float
    score: float
    kind: str  # deviation | fleet_outlier | absent | trend | step | peak | idle | added
    bad: bool  # the signal's bad way (a queue that grew; a hit ratio that fell)
    evidence: Evidence
    uncertainty_s: float = 0.0
    before: float | None = None
    after: float | None = None
    #: read against the window's own first part only (no baseline window held the series)
    weak: bool = False

    @property
    def key(self) -> tuple[str, str]:
        return (self.signal, self.instance)

    @property
    def is_effect(self) -> bool:
        return self.facet in EFFECTS

    @property
    def is_work(self) -> bool:
        """Work arriving: a trigger's sign."""
        return self.facet == "arrivals"

    @property
    def follows_work(self) -> bool:
        """What rises and falls with the work (a process's CPU, a batch's size)."""
        sig = all_signals().get(self.signal)
        return sig is not None and sig.load

    @property
    def ratio(self) -> float | None:
        if self.before is None or self.after is None or self.before == 0:
            return None
        return self.after / self.before


def _bad(signal: str, direction: str) -> bool:
    sig = all_signals().get(signal)
    return sig is not None and sig.bad in (direction, "both")


def _from_anomaly(ctx: Context, world: World, a: Anomaly, cfg: PathConfig) -> Change | None:
    node = world.node_of(a.signal, a.instance)
    sig = all_signals().get(a.signal)
    if node is None or sig is None:
        return None
    facet = "availability" if a.kind == "absent" else sig.facet
    if a.kind != "trend":
        a = dataclasses.replace(a, onset=first_sign(ctx, a, cfg.redate_lookback_s))
    return Change(
        node=node,
        signal=a.signal,
        instance=a.instance,
        facet=facet,
        direction=a.direction,
        onset=a.onset,
        score=float(a.score),
        kind=a.kind,
        bad=a.kind == "absent" or _bad(a.signal, a.direction),
        evidence=from_anomaly(a, ctx, True),
        uncertainty_s=float(a.onset_uncertainty_s),
        before=a.baseline,
        after=a.observed,
        weak=a.weak,
    )


def _steps(
    ctx: Context, world: World, cfg: PathConfig, known: set[tuple[str, str]]
) -> list[Change]:
    """Medians since the onset against medians before it, for the facets that explain."""
    det, rules = DetectConfig(), ctx.config
    k = ctx.split()
    out: list[Change] = []
    for name, s in ctx.frame.series.items():
        sig = all_signals().get(name)
        if sig is None or sig.facet not in _STEP_FACETS or s.values.shape[1] <= k:
            continue
        pre = s.values[:, :k]
        enough = np.sum(~np.isnan(pre), axis=1) >= rules.shift_min_before
        if not enough.any():
            continue
        med = row_medians(pre)
        mad = row_medians(np.abs(pre - med[:, None]))
        halves = ctx.split_medians(name, k)
        floor = det.abs_floor(name, sig.unit)
        for r, inst in enumerate(s.instances):
            if (name, inst) in known or not enough[r]:
                continue
            before, after = halves.get(inst, (None, None))
            if before is None or after is None:
                continue
            moved = after - before
            sigma = MAD_TO_SIGMA * float(mad[r])
            if abs(moved) <= max(rules.shift_z * sigma, floor, 1e-12):
                continue
            low, high = sorted((abs(before), abs(after)))
            if low > 0 and high / low < cfg.step_ratio:
                continue
            node = world.node_of(name, inst)
            if node is None:
                continue
            began = step_start(ctx, s.values[r], before, after, cfg.redate_lookback_s)
            way = "up" if moved > 0 else "down"
            u = sig.unit
            ratio = format_ratio(after / before) if before else ""
            text = (
                f"{name} on {inst} {'rose' if way == 'up' else 'fell'} from "
                f"{format_value(before, u)} to {format_value(after, u)}"
                f"{f' ({ratio})' if ratio else ''} at {clock(began)}"
            )
            score = min(abs(moved) / max(sigma, 1e-12), 1e3)
            out.append(
                Change(
                    node=node,
                    signal=name,
                    instance=inst,
                    facet=sig.facet,
                    direction=way,
                    onset=began,
                    score=min(score, 10.0) * min(high / max(low, 1e-12), 10.0) / 2.0,
                    kind="step",
                    bad=_bad(name, way),
                    evidence=_evidence(ctx, name, inst, "step", before, after, text, began),
                    uncertainty_s=ctx.frame.step,
                    before=before,
                    after=after,
                )
            )
    return out


def _evidence(
    ctx: Context,
    signal: str,
    inst: str,
    kind: str,
    before: float | None,
    after: float | None,
    text: str,
    onset: float | None = None,
) -> Evidence:
    return Evidence(
        signal=signal,
        instance=inst,
        kind=kind,
        supports=True,
        statement=text,
        window_start=ctx.onset,
        window_end=ctx.frame.end,
        baseline=before,
        observed=after,
        unit=ctx.unit(signal),
        onset=ctx.onset if onset is None else onset,
    )


def _peaks(
    ctx: Context, world: World, cfg: PathConfig, known: set[tuple[str, str]]
) -> list[Change]:
    """What fills (memory, a queue's occupancy), arrives (work) or comes at once (a stampede's
    concurrent loads) and peaks higher than before, where its median says nothing: a card
    that fills and empties as its engine crash-loops has a median as before, and a peak a
    third higher. Read away from restarts (`Context.settled_row`)."""
    det = DetectConfig()
    k = ctx.split()
    out: list[Change] = []
    for name, s in ctx.frame.series.items():
        sig = all_signals().get(name)
        fills = sig is not None and (sig.facet in ("saturation", "resource") or sig.at_once)
        # a burst of work is work: a replica's share while its peers restart, for minutes
        burst = sig is not None and sig.facet == "arrivals"
        if sig is None or not ((fills and sig.bad == "up") or burst):
            continue
        floor = det.abs_floor(name, sig.unit)
        day = ctx.baselines.get("baseline-1d")
        then = day.get(name) if day is not None else None
        for inst in s.instances:
            if (name, inst) in known:
                continue
            high_pre, _, high, _ = ctx.extremes(name, inst, k, True)
            # a burst that began before the users noticed (a hot key expiring since an hour
            # ago) peaked before the onset too: the same hours yesterday say what was usual
            y = then.row(inst) if then is not None else None
            if y is not None and np.any(np.isfinite(y)):
                high_pre = min(high_pre, float(np.nanmax(y))) if np.isfinite(high_pre) else high_pre
            if not (np.isfinite(high_pre) and np.isfinite(high)) or high_pre < 0:
                continue
            if high - high_pre <= floor or high < cfg.step_ratio * high_pre:
                continue
            node = world.node_of(name, inst)
            row = ctx.settled_row(name, inst)
            if node is None or row is None:
                continue
            # dated where it first passed halfway to its peak, as `first_sign` dates a shift:
            # a reading a hair over the old highest is noise, not the peak's start
            half = part_way(high_pre, high, 0.5)
            above = np.flatnonzero(np.nan_to_num(row[k:], nan=-np.inf) > half)
            began = float(ctx.frame.times[k + int(above[0])]) if above.size else ctx.onset
            u = sig.unit
            text = (
                f"{name} on {inst} peaked at {format_value(high, u)} since the onset; its "
                f"highest before (or the same hours yesterday) was {format_value(high_pre, u)}"
                + (f" ({format_ratio(high / high_pre)})" if high_pre > 0 else "")
            )
            out.append(
                Change(
                    node=node,
                    signal=name,
                    instance=inst,
                    facet=sig.facet,
                    direction="up",
                    onset=began,
                    score=min(high / max(high_pre, 1e-12), 10.0) * 2.0,
                    kind="peak",
                    bad=True,
                    evidence=_evidence(ctx, name, inst, "peak", high_pre, high, text, began),
                    uncertainty_s=ctx.frame.step,
                    before=high_pre,
                    after=high,
                )
            )
    return out


def _hop(ctx: Context, world: World) -> list[Change]:
    """Time the gateway saw added between itself and the servers (the `adds` reading): the
    hop's own change, since the hop has no series of its own."""
    if HOP not in world.nodes:
        return []
    gateways = {n.instance for n in world.nodes.values() if n.part == "gateway"}
    for inst in sorted(gateways):
        times_upstream = any(ctx.row(client, inst) is not None for client, _ in _HOP_PAIRS)
        for client, server in _HOP_PAIRS if times_upstream else _HOP_FALLBACK:
            if ctx.row(client, inst) is None:
                continue
            cond = Condition(signal=client, state="adds", than=server, factor=_HOP_FACTOR)
            reading = state_on(ctx, cond, inst)
            if not reading.holds or reading.evidence is None:
                continue
            e = reading.evidence
            return [
                Change(
                    node=HOP,
                    signal=client,
                    instance=inst,
                    facet="time",
                    direction="up",
                    onset=reading.onset or ctx.onset,
                    score=float(reading.score),
                    kind="added",
                    bad=True,
                    evidence=e,
                    uncertainty_s=ctx.frame.step,
                    before=e.baseline,
                    after=e.observed,
                )
            ]
    return []


def _idle(ctx: Context, world: World, cfg: PathConfig) -> list[Change]:
    """Replicas that take no requests at all, before and since the onset, while the others of
    their role serve: capacity out of service from before the window began (taken out of
    rotation hours ago), whose share the others carry. Not a change in the window, but what a
    change in the others' load is measured against."""
    out: list[Change] = []
    for name, s in ctx.frame.series.items():
        sig = all_signals().get(name)
        if sig is None or sig.facet != "arrivals" or sig.part != "service":
            continue
        halves = ctx.split_medians(name, ctx.split())
        roles: dict[str, list[str]] = {}
        for inst in s.instances:
            roles.setdefault(ctx.role(inst), []).append(inst)
        for members in roles.values():
            busy = [a for i in members if (a := halves.get(i, (None, None))[1]) is not None]
            if len(members) < 2 or not busy or float(np.median(busy)) <= 0:
                continue
            level = float(np.max(busy)) * cfg.idle_share
            for inst in members:
                before, after = halves.get(inst, (None, None))
                if before is None or after is None or max(before, after) > level:
                    continue
                node = world.node_of(name, inst)
                if node is None:
                    continue
                text = (
                    f"{name} on {inst} at {format_value(after, sig.unit)} before and since the "
                    f"onset while its peers serve up to {format_value(max(busy), sig.unit)}: out "
                    "of rotation since before the window"
                )
                out.append(
                    Change(
                        node=node,
                        signal=name,
                        instance=inst,
                        facet="capacity",
                        direction="down",
                        onset=ctx.frame.start,
                        score=cfg.idle_score,
                        kind="idle",
                        bad=True,
                        evidence=_evidence(ctx, name, inst, "idle", before, after, text),
                        uncertainty_s=ctx.frame.step,
                        before=before,
                        after=after,
                    )
                )
    return out


def _still_answers(ctx: Context, a: Anomaly) -> bool:
    """A series that stopped on a machine whose scrape target or request counter still reads
    since: a latency histogram with no request to time, not a part gone (a replica taken out
    of rotation still answers, and serves nothing)."""
    if a.signal in ANSWERING:
        return False
    k = ctx.frame.index_of(a.onset)
    for sig in (*ANSWERING, *_COUNTS):
        row = ctx.row(sig, a.instance)
        if row is not None and row[k:].size and np.any(np.isfinite(row[k:])):
            return sig not in ANSWERING or bool(np.nanmin(row[k:]) >= 0.5)
    return False


def find_changes(ctx: Context, world: World, cfg: PathConfig) -> list[Change]:
    """Every change of the window, strongest kept per series (an absence over all)."""
    best: dict[tuple[str, str], Change] = {}
    trends = {(t.signal, t.instance): t for t in ctx.det.trends}
    for a in ctx.det.anomalies:
        # a weak anomaly is read against the window's own first part (no baseline window):
        # evidence all the same, at the strength detection gave it
        if a.kind == "trend":  # dated by where its climb began, not by when it was seen
            t = trends.get((a.signal, a.instance))
            a = dataclasses.replace(a, onset=t.start) if t is not None else a
        if a.kind == "absent" and _still_answers(ctx, a):
            continue
        c = _from_anomaly(ctx, world, a, cfg)
        if c is None:
            continue
        old = best.get(c.key)
        if old is None or _stronger(c, old):
            best[c.key] = c
    changes = [_rose_again(ctx, c, cfg) for c in best.values()]
    stepped = _steps(ctx, world, cfg, set(best))
    changes += stepped
    changes += _peaks(ctx, world, cfg, set(best) | {c.key for c in stepped})
    changes += _hop(ctx, world)
    changes += [c for c in _idle(ctx, world, cfg) if c.key not in best]
    return changes


def _rose_again(ctx: Context, c: Change, cfg: PathConfig) -> Change:
    """An arrivals rise that held a level for a while and rose again later by a step of its
    own (a replica's traffic up with the day, then up again by its peers' share when they
    restarted) is dated at the later step, from the level it held before it: that is the work
    that came with the effects then, and what it carried before was carried without them."""
    if c.facet != "arrivals" or c.direction != "up" or c.kind == "trend":
        return c
    row = ctx.row(c.signal, c.instance)
    if row is None:
        return c
    t = ctx.frame.times
    i0 = int(np.searchsorted(t, c.onset))
    gap = int(np.ceil(cfg.onset_slack_s / ctx.frame.step))
    seg = row[i0:]
    with np.errstate(invalid="ignore"):
        held = np.fmax.accumulate(np.nan_to_num(seg, nan=-np.inf))
        for j in range(max(gap, 3), seg.size - 1):
            level = seg[j - gap : j]
            plateau = np.nanmax(level) < cfg.more_work * np.nanmin(level)  # not a ramp
            up = min(seg[j], seg[j + 1]) >= cfg.more_work * held[j - 1]
            if plateau and up:
                before = float(np.nanmedian(seg[:j]))
                after = float(np.nanmedian(seg[j:]))
                return dataclasses.replace(
                    c, onset=float(t[i0 + j]), kind="step", before=before, after=after
                )
    return c


def _stronger(c: Change, old: Change) -> bool:
    if (c.kind == "absent") != (old.kind == "absent"):
        return c.kind == "absent"
    if (c.kind == "trend") != (old.kind == "trend"):  # a step or an outlier says more
        return old.kind == "trend"
    if c.bad != old.bad:
        return c.bad
    return c.score > old.score


def by_node(changes: Iterable[Change]) -> dict[str, list[Change]]:
    out: dict[str, list[Change]] = {}
    for c in changes:
        out.setdefault(c.node, []).append(c)
    return out
