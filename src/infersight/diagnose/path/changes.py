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

import numpy as np

from infersight.detect import Anomaly
from infersight.detect.absence import ANSWERING
from infersight.diagnose.context import Context
from infersight.diagnose.evidence import from_anomaly
from infersight.diagnose.kb import Condition
from infersight.diagnose.path.change import Change, bad_way
from infersight.diagnose.path.config import PathConfig
from infersight.diagnose.path.dating import first_sign
from infersight.diagnose.path.shifts import peaks, shift_evidence, steps
from infersight.diagnose.path.world import HOP, World
from infersight.diagnose.states.registry import state_on
from infersight.signals import all_signals
from infersight.units import format_value

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


def _from_anomaly(ctx: Context, world: World, a: Anomaly, cfg: PathConfig) -> Change | None:
    node = world.node_of(a.signal, a.instance)
    sig = all_signals().get(a.signal)
    if node is None or sig is None:
        return None
    world.ensure(node)
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
        bad=a.kind == "absent" or bad_way(a.signal, a.direction),
        evidence=from_anomaly(a, ctx, True),
        uncertainty_s=float(a.onset_uncertainty_s),
        before=a.baseline,
        after=a.observed,
        weak=a.weak,
    )


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
                        evidence=shift_evidence(ctx, name, inst, "idle", before, after, text),
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
    first: dict[tuple[tuple[str, str], str], float] = {}
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
        if c.kind in _SIGNS and c.bad:
            first[c.key, c.direction] = min(c.onset, first.get((c.key, c.direction), c.onset))
    changes = [_rose_again(ctx, _first_sign(c, first), cfg) for c in best.values()]
    stepped = steps(ctx, world, cfg, set(best))
    changes += stepped
    changes += peaks(ctx, world, cfg, set(best) | {c.key for c in stepped})
    changes += _hop(ctx, world)
    changes += [c for c in _idle(ctx, world, cfg) if c.key not in best]
    return changes


#: the kinds that date a series' change by its first sign: against its own past or its peers
_SIGNS = ("deviation", "fleet_outlier")


def _first_sign(c: Change, first: dict[tuple[tuple[str, str], str], float]) -> Change:
    """The change dated by its series' first sign the same bad way: a replica's passes above
    its peers' since 08:58 that grew into a deviation from its own past at 11:25 began at
    08:58 (as `diagnose.conditions` dates a rule's evidence), so the load that came at 11:25
    does not look older than the slowness it found."""
    if c.kind not in _SIGNS or not c.bad:
        return c
    at = first.get((c.key, c.direction), c.onset)
    return dataclasses.replace(c, onset=at) if at < c.onset else c


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
