"""Changes detection does not report: a step of the medians at the onset that its alerting band
did not call (a third more requests on the survivors of a lost peer), and a peak higher than
any before where the median says nothing (a card that fills and empties as its engine
crash-loops)."""

from __future__ import annotations

import numpy as np

from infersight.detect.config import DetectConfig
from infersight.diagnose.config import MAD_TO_SIGMA
from infersight.diagnose.context import Context, row_medians
from infersight.diagnose.evidence import clock
from infersight.diagnose.path.change import Change, bad_way
from infersight.diagnose.path.config import PathConfig
from infersight.diagnose.path.dating import part_way, step_start
from infersight.diagnose.path.world import World
from infersight.diagnose.result import Evidence
from infersight.signals import all_signals
from infersight.units import format_ratio, format_value

#: facets read as steps at the onset where detection found nothing (effects are detection's:
#: a latency that shifted a little under its band is no incident)
_STEP_FACETS = frozenset(
    {"arrivals", "sends", "input", "capacity", "process", "resource", "network", "saturation"}
)


def steps(ctx: Context, world: World, cfg: PathConfig, known: set[tuple[str, str]]) -> list[Change]:
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
                    bad=bad_way(name, way),
                    evidence=shift_evidence(ctx, name, inst, "step", before, after, text, began),
                    uncertainty_s=ctx.frame.step,
                    before=before,
                    after=after,
                )
            )
    return out


def shift_evidence(
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


def peaks(ctx: Context, world: World, cfg: PathConfig, known: set[tuple[str, str]]) -> list[Change]:
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
                    evidence=shift_evidence(ctx, name, inst, "peak", high_pre, high, text, began),
                    uncertainty_s=ctx.frame.step,
                    before=high_pre,
                    after=high,
                )
            )
    return out
