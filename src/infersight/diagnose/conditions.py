"""Conditions on signal states, evaluated in three values: holds, does not hold, unknown.

A condition on a signal the data lacks is *unknown*, never "normal": a missing signal is not a
healthy one. `all` is false as soon as one member is false, unknown if one is unknown, else
true; `any` is true as soon as one member is true. A prediction that cannot be checked because
its signals are absent from the data altogether (an exporter not deployed, a metric dropped by
relabelling) and that the rule does not `require` is a *gap*, not a veto: `all` then holds on
what could be checked, and names the gap (`Outcome.gaps`). Only a rule's predictions can be
gaps: the members of its top `all`, or of each `all` alternative of a top `any`; a deeper
group reads one prediction several ways, jointly, and stays three-valued. Neither the anchor
(an `all`'s first member, the change that names the mechanism) nor what must stay put
(`normal`: what tells a cause from its neighbours) is ever a gap.

The first member of an `all` group that holds fixes the instances that `where: same` members
look at (the vector DB's host metrics are read on the vector DB, the GPU's temperature on the
node whose requests are slow).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from infersight.diagnose.context import Context
from infersight.diagnose.evidence import clock, from_normal
from infersight.diagnose.kb import Condition, Group
from infersight.diagnose.result import Evidence
from infersight.diagnose.states import capacity, level
from infersight.diagnose.states.direction import direction_ok, wanted_direction
from infersight.diagnose.states.peaks import extreme_split, reads_extreme, settled_data
from infersight.diagnose.states.registry import state_on
from infersight.units import format_duration

Truth = bool | None
#: states read on the readings since the onset (a series that stopped has none: unknown)
_READS_SINCE_ONSET = frozenset(
    {"normal", "up", "down", "above", "below", "rose", "fell", "outlier", "outpaces"}
)


@dataclass
class Outcome:
    truth: Truth
    instances: frozenset[str] = frozenset()
    evidence: list[Evidence] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    onset: float | None = None
    scores: list[float] = field(default_factory=list)
    #: per instance where it holds: when its change began (every alternative that held and
    #: dates its change: an `any` group keeps them all)
    began: dict[str, tuple[float, ...]] = field(default_factory=dict)
    #: signals of predictions an `all` could not check and held without (see the module doc)
    gaps: list[str] = field(default_factory=list)
    #: False when nothing beneath could be read at all: every signal it names is missing
    checked: bool = True
    #: a prediction that something stays put could not be read beneath: what tells a cause
    #: from its neighbours, so never a gap
    steady: bool = False
    #: the share of its predictions it held without checking: gaps of an `all` count one
    #: member each, nested shares count in proportion; an `any` takes its best-checked holder
    unchecked: float = 0.0


def _candidates(ctx: Context, c: Condition, anchor: frozenset[str] | None) -> tuple[str, ...]:
    """The instances a condition reads, the most suspect first (`Context.suspicion`): what is
    shown for or against it is read on the instance in question."""
    carrying = ctx.instances_of(c.signal)
    if anchor is None or c.where == "any":
        out = carrying
    elif c.where == "same":
        out = tuple(i for i in carrying if i in anchor)
    else:
        out = tuple(i for i in carrying if i not in anchor)
    worst = ctx.suspicion()
    return tuple(sorted(out, key=lambda i: -worst.get(i, 0.0)))


def _together(
    ctx: Context,
    c: Condition,
    inst: str,
    onset: float | None,
    began: dict[str, tuple[float, ...]],
) -> bool:
    """`when: together`: this change began within `together_s` of one the anchor found on
    `inst` (any of its alternatives that held); `when: after`: no earlier than it, less one
    grid step. An anchor dated by the window's first point was there before the window: its
    start is unknown, so it cannot be said to come apart."""
    if c.when not in ("together", "after") or onset is None or not began.get(inst):
        return True
    known = ctx.frame.start + ctx.frame.step
    if c.when == "after":
        return any(t <= known or onset >= t - ctx.frame.step for t in began[inst])
    within = ctx.config.together_s
    return any(t <= known or abs(onset - t) <= within for t in began[inst])


def _during(
    ctx: Context, c: Condition, inst: str, began: dict[str, tuple[float, ...]]
) -> float | None:
    """`when: during`: when the anchor's change began on `inst` (its first alternative that
    held there) if that is after the incident's onset; None (read since the onset) else."""
    if c.when != "during" or not began.get(inst) or began[inst][0] <= ctx.onset:
        return None
    return began[inst][0]


def _first_sign(
    ctx: Context, c: Condition, inst: str, onset: float | None, family: tuple[str, ...] = ()
) -> float | None:
    """When the change this condition found first showed on `inst`: its earliest deviation or
    fleet outlier the same way, on its signal or the others its `any` group reads as the same
    change (`family`). A batch time above its peers' since 09:10 that grew into a deviation
    from its own past at 11:35 began at 09:10; so did a tail that only moved at 11:35."""
    if onset is None or c.when not in ("together", "after"):
        return onset
    want = wanted_direction(ctx, c)
    seen = [
        a.onset
        for sig in family or (c.signal,)
        for a in ctx.anomalies(sig, inst)
        if a.kind in ("deviation", "fleet_outlier") and direction_ok(a, want)
    ]
    return min([onset, *seen])


def eval_condition(
    ctx: Context,
    c: Condition,
    anchor: frozenset[str] | None,
    began: dict[str, tuple[float, ...]] | None = None,
    family: tuple[str, ...] = (),
    refuting: bool = False,
) -> Outcome:
    """One condition across its candidate instances. `refuting`: read to rule a cause out,
    where a bad level (`above`/`below`) already passed before the incident marks no change of
    it and rules nothing out: a level alone never vetoes."""
    cands = _candidates(ctx, c, anchor)
    if not cands:
        missing = [c.signal] if not ctx.instances_of(c.signal) or c.where == "same" else []
        if missing:
            return Outcome(None, missing=missing, checked=False, steady=c.state == "normal")
        return Outcome(False)
    if c.state == "adds" and c.than is not None and not ctx.instances_of(c.than):
        # no server-side view: where the time sits is unknown
        return Outcome(None, missing=[c.than])
    if c.state in _READS_SINCE_ONSET:
        # a series that stopped at the onset says nothing of what came after: its readings
        # before are never "unchanged", nor evidence against (a cache that stopped answering)
        live = tuple(i for i in cands if not ctx.stopped(c.signal, i))
        if not live:
            return Outcome(None, missing=[c.signal], checked=False, steady=c.state == "normal")
        cands = live
    if c.state in ("over_capacity", "within_capacity"):
        decided = capacity.decidable(ctx, c, cands)
        if not decided:
            return Outcome(None, missing=capacity.missing(ctx, c, cands))
        cands = decided
    if c.stat != "median" and c.state in ("up", "down", "above", "below"):
        readable = [i for i in cands if settled_data(ctx, c, i)]
        if not readable:  # only readings right after restarts, which are not trusted
            return Outcome(None)
        cands = tuple(readable)
    held: list[str] = []
    evidence: list[Evidence] = []
    onsets: list[float] = []
    scores: list[float] = []
    first_bad: Evidence | None = None
    at: dict[str, tuple[float, ...]] = {}
    apart: Evidence | None = None
    shown = ctx.config.normal_shown
    for inst in cands:
        since = _during(ctx, c, inst, began or {})
        reading = state_on(ctx, c, inst, len(evidence) < shown, since)
        ok, ev, onset = reading.holds, reading.evidence, reading.onset
        if ok and refuting and c.state in ("above", "below"):
            ok = not level.bad_before(ctx, c, inst, since)
        if ok and refuting and reading.partial:  # weak evidence rules nothing out
            ok = False
        first = _first_sign(ctx, c, inst, onset, family)
        if ok and not _together(ctx, c, inst, first, began or {}):
            ok = False
            if apart is None and ev is not None and first is not None:
                apart = _apart(ev, first, (began or {})[inst], c.when)
        if ok:
            held.append(inst)
            if ev is not None:
                evidence.append(ev)
            if onset is not None:
                onsets.append(onset)
                at[inst] = (onset,)
            scores.append(reading.score)
        elif c.state == "normal":  # one instance off is enough to say it is not normal
            first_bad = ev
            break
    if c.state == "normal":
        if len(held) < len(cands):
            contra = [first_bad] if first_bad is not None else []
            return Outcome(False, evidence=[_against(e) for e in contra])
        normal = [ctx.config.normal_score]
        return Outcome(True, frozenset(held), evidence[:shown], scores=normal)
    share = len(held) / len(cands)
    # one machine among peers is never a fleet-wide change: with two of them, one is half
    too_many = share > c.max_share and not (len(held) == 1 < len(cands))
    if not held or share < c.min_share or too_many:
        since = _during(ctx, c, cands[0], began or {})
        seen = [apart] if apart else _not_seen(ctx, c, cands, since, held)
        return Outcome(False, evidence=seen)
    return Outcome(
        True, frozenset(held), evidence, onset=min(onsets, default=None), scores=scores, began=at
    )


def _apart(e: Evidence, onset: float, anchor: tuple[float, ...], when: str) -> Evidence:
    """Evidence against: the change happened, but not together with the anchor's (or, for
    `after`, before it)."""
    gap = min(anchor, key=lambda t: abs(onset - t))
    word = "before" if onset < gap else "after"
    must = "follow" if when == "after" else "come with"
    text = (
        f"{e.statement}: {format_duration(abs(onset - gap))} {word} the change it must {must} "
        f"(at {clock(gap)}), not {'after it' if when == 'after' else 'together'}"
    )
    return dataclasses.replace(e, supports=False, statement=text)


def _against(e: Evidence) -> Evidence:
    return Evidence(**{**e.__dict__, "supports": False})


def _not_seen(
    ctx: Context,
    c: Condition,
    cands: Sequence[str],
    since: float | None = None,
    held: Sequence[str] = (),
) -> list[Evidence]:
    """One piece of evidence against: the condition looked for and not found, on the first
    instance that lacks it; where it held on too few (or too many), how many."""
    holding = set(held)
    inst = next((i for i in cands if i not in holding), cands[0])
    if c.state in ("over_capacity", "within_capacity"):
        against = capacity.not_seen(ctx, c, inst)
        if against is not None:
            return [against]
    pre, post, _ = ctx.before_after(c.signal, inst, since)
    if c.stat != "median" and c.state in ("up", "down", "above", "below"):
        k = extreme_split(ctx, c, since)
        high_pre, low_pre, high, low = ctx.extremes(c.signal, inst, k, reads_extreme(c))
        pre, post = (high_pre, high) if c.stat == "max" else (low_pre, low)
        pre, post = (None if np.isnan(v) else v for v in (pre, post))
    ev = from_normal(ctx, c.signal, inst, pre, post, wanted=c, since=since)
    if held:
        few = len(held) < c.min_share * len(cands)
        bound = f"at least {c.min_share:.0%}" if few else f"at most {c.max_share:.0%}"
        ev = dataclasses.replace(
            ev,
            statement=f"{ev.statement}; it held on {len(held)} of {len(cands)} instances, "
            f"needs {bound}",
        )
    return [ev]


def _is_gap(o: Outcome, tolerated: frozenset[str]) -> bool:
    """An unknown member nothing of which could be read, for want of signals absent from the
    data and not required. One whose other readings were checked and failed is not a gap: the
    prediction was put to the test through what the data has."""
    return (
        o.truth is None
        and not o.checked
        and not o.steady
        and bool(o.missing)
        and set(o.missing) <= tolerated
    )


def eval_group(
    ctx: Context,
    g: Group,
    anchor: frozenset[str] | None = None,
    began: dict[str, tuple[float, ...]] | None = None,
    tolerated: frozenset[str] = frozenset(),
    refuting: bool = False,
) -> Outcome:
    """`tolerated`: signals absent from the data that the rule does not require; a member of
    this `all` left unknown only for want of them is a gap (see the module doc), passed down
    only through an `any` (its alternatives are predictions too). `refuting`: the group rules a
    cause out (see `eval_condition`)."""
    outs: list[Outcome] = []
    local, local_began = anchor, began
    # alternatives of an `any` that must come together with the anchor's change are one
    # change read several ways: it began at the earliest of them
    family = tuple(
        dict.fromkeys(
            m.signal
            for m in g.members
            if g.mode == "any" and isinstance(m, Condition) and m.when == "together"
        )
    )
    for m in g.members:
        if isinstance(m, Condition):
            # a level alone never vetoes; one that qualifies a change in an `all` (GPUs
            # pinned during a surge) is read as it stands
            alone = refuting and g.mode == "any"
            o = eval_condition(ctx, m, local, local_began, family, alone)
        else:
            # gaps are a rule's predictions left unchecked: the members of its top `all` (or of
            # each `all` alternative of a top `any`); deeper groups read one prediction
            # several ways, jointly (errors up *and* tokens halved), and stay three-valued
            inner = tolerated if g.mode == "any" else frozenset()
            o = eval_group(ctx, m, local, local_began, inner, refuting)
        outs.append(o)
        if g.mode == "all" and o.truth is True and o.instances:
            where = m.where if isinstance(m, Condition) else "same"
            if local is None:
                local = o.instances
            elif where == "same":
                local = local & o.instances or local
            if local_began is None:
                local_began = o.began
    every = outs
    # the first member is the anchor, the change that names the mechanism: never a gap
    gaps = [o for o in outs[1:] if g.mode == "all" and _is_gap(o, tolerated)]
    outs = [o for o in outs if not any(o is gap for gap in gaps)]
    truths = [o.truth for o in outs]
    at: dict[str, tuple[float, ...]] = {}
    if g.mode == "all":
        truth: Truth = False if False in truths else (None if None in truths else True)
        inst = local or frozenset()
        at = dict(local_began or {}) if truth is True else {}
    else:
        truth = True if True in truths else (None if None in truths else False)
        inst = frozenset().union(*(o.instances for o in outs if o.truth is True))
        for o in outs:
            if o.truth is True:
                for i, ts in o.began.items():
                    at[i] = at.get(i, ()) + ts
    keep = [o for o in outs if o.truth is truth] if truth is not None else outs
    onsets = [o.onset for o in keep if o.onset is not None and o.truth is True]
    held_gaps = {s for o in gaps for s in o.missing} if truth is True else set()
    held_gaps |= {s for o in keep if o.truth is True for s in o.gaps}
    holders = [o.unchecked for o in keep if o.truth is True]
    if truth is not True or not holders:
        share = 0.0
    elif g.mode == "all":
        share = (len(gaps) + sum(holders)) / len(every)
    else:
        share = min(holders)
    return Outcome(
        truth,
        inst,
        [e for o in keep for e in o.evidence],
        sorted({s for o in every for s in o.missing}),
        onsets[0] if onsets else None,
        [s for o in keep if o.truth is True for s in o.scores],
        at,
        sorted(held_gaps),
        checked=any(o.checked for o in every),
        steady=any(o.steady for o in every),
        unchecked=share,
    )
