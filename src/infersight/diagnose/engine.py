"""diagnose(): the layered walk over the knowledge base (seed §2.3), falsify, chain, rank.

After scope triage (detection's), every hypothesis is tried in the seed's layer order (access →
service → inference → dependency → infrastructure) and marked confirmed, refuted or
inconclusive (data missing, named). Confirmed ones are linked by `explains`; the causes no other
confirmed cause explains are the roots, ranked by onset then strength, each with its chain to
the symptoms. What no confirmed hypothesis explains goes to the statistical fallback.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass

from infersight.detect import DetectionResult, detect
from infersight.detect.config import DEFAULT_USER_FACING
from infersight.diagnose import chain as chain_mod
from infersight.diagnose import unnamed
from infersight.diagnose.calibrate import in_rank_order
from infersight.diagnose.carrying import with_cautions
from infersight.diagnose.conditions import Outcome, eval_group
from infersight.diagnose.config import DiagnoseConfig
from infersight.diagnose.context import Context
from infersight.diagnose.fallback import unexplained
from infersight.diagnose.kb import KnowledgeBase, Rule, load_kb, walk
from infersight.diagnose.path import Change, PathConfig, Walk, trace
from infersight.diagnose.path.topology import Topology
from infersight.diagnose.rank import Candidate, confidence, order
from infersight.diagnose.result import (
    Diagnosis,
    Evidence,
    HypothesisResult,
    RootCause,
    UncheckedCause,
    UnexplainedChange,
    Verdict,
)
from infersight.diagnose.root_site import Resolution
from infersight.diagnose.roots import resolve
from infersight.diagnose.settings import with_setting
from infersight.diagnose.starts import felt, unsettled
from infersight.diagnose.summary import next_actions, summarize
from infersight.frame import MetricFrame, SignalSeries
from infersight.grounds import changed_within
from infersight.readings import readable
from infersight.signals import is_event

INCIDENT = "incident"


@dataclass(frozen=True)
class _Tried:
    rule: Rule
    verdict: Verdict
    confirm: Outcome
    refute: Outcome | None


def _cut(frame: MetricFrame, at: float | None) -> MetricFrame:
    if at is None or at >= frame.end:
        return frame
    n = frame.index_of(at) + 1 if at >= frame.start else 0
    series = {k: SignalSeries(v.instances, v.values[:, :n]) for k, v in frame.series.items()}
    return MetricFrame(frame.start, frame.step, n, series)


def _try(ctx: Context, rule: Rule) -> _Tried:
    # the condition signals the data lacks altogether. With everything the rule `requires`
    # there, predictions on them are gaps, not vetoes; with a requirement unmet the rule cannot
    # be judged, and a refute on other signals does not rule it out (a throttling rule is not
    # ruled out where no throttling figure is scraped). A rule that declares nothing required
    # needs all it reads.
    absent = frozenset(s for s in rule.condition_signals() if not ctx.instances_of(s))
    unmet = bool(rule.requires) and bool(rule.unobservable(absent))
    tolerated = absent if rule.requires and not unmet else frozenset()
    c = eval_group(ctx, rule.confirm, tolerated=tolerated)
    r = None
    if rule.refute is not None:
        r = eval_group(ctx, rule.refute, c.instances or None, refuting=True)
    verdict: Verdict
    if c.truth is not True and unmet:
        verdict = "inconclusive"
    elif r is not None and r.truth is True:
        verdict = "refuted"
    elif c.truth is True:
        verdict = "confirmed"
    elif c.truth is False:
        verdict = "refuted"
    else:
        verdict = "inconclusive"
    return _Tried(rule, verdict, c, r)


def _earliest(t: _Tried) -> float | None:
    """When the first piece of a confirmed hypothesis's evidence began (for time order: a
    cause whose batches and forward passes changed at 08:32 may explain OOMs at 09:50, even if
    its first condition's change point is dated 10:18)."""
    times = [e.onset for e in t.confirm.evidence if e.onset is not None and e.kind != "trend"]
    return min(times, default=t.confirm.onset)


def _evidence(t: _Tried) -> tuple[Evidence, ...]:
    out: list[Evidence] = []
    if t.verdict == "confirmed":
        out = [dataclasses.replace(e, supports=True) for e in t.confirm.evidence]
    elif t.refute is not None and t.refute.truth is True:
        out = [dataclasses.replace(e, supports=False) for e in t.refute.evidence]
        out += [dataclasses.replace(e, supports=True) for e in t.confirm.evidence]
    else:
        out = [dataclasses.replace(e, supports=False) for e in t.confirm.evidence]
    seen: set[tuple[str, str, str, bool]] = set()
    uniq = []
    for e in out:
        key = (e.signal, e.instance, e.kind, e.supports)
        if key not in seen:
            seen.add(key)
            uniq.append(e)
    return tuple(uniq)


def _result(
    t: _Tried,
    graph: Mapping[str, list[str]],
    back: Mapping[str, list[str]],
    config: DiagnoseConfig,
) -> HypothesisResult:
    ev = _evidence(t)
    undecided = t.verdict == "confirmed" and t.refute is not None and t.refute.truth is None
    conf = 0.0
    gaps = tuple(t.confirm.gaps) if t.verdict == "confirmed" else ()
    if t.verdict == "confirmed":
        conf = confidence(t.confirm.scores, ev, sum(1 for _ in walk(t.rule.confirm)), config)
        conf = round(conf * (1 - config.gap_weight * t.confirm.unchecked), 3)
    return HypothesisResult(
        id=t.rule.id,
        title=t.rule.title,
        layer=t.rule.layer,
        verdict=t.verdict,
        confidence=conf,
        seed=t.rule.seed,
        onset=t.confirm.onset if t.verdict == "confirmed" else None,
        instances=tuple(sorted(t.confirm.instances)) if t.verdict == "confirmed" else (),
        evidence=ev,
        missing_signals=tuple(t.confirm.missing) if t.verdict == "inconclusive" else (),
        explains=tuple(graph.get(t.rule.id, ())),
        explained_by=tuple(back.get(t.rule.id, ())),
        remedy=t.rule.remedy,
        runbook=t.rule.runbook,
        refute_undecided=undecided,
        refute_missing=tuple(t.refute.missing) if undecided and t.refute is not None else (),
        unchecked_predictions=gaps,
    )


def _roots(
    ctx: Context,
    walked: Walk,
    res: Resolution,
    kb: KnowledgeBase,
    results: dict[str, HypothesisResult],
    confirmed: Mapping[str, Rule],
    graph: dict[str, list[str]],
    cfg: DiagnoseConfig,
    path: PathConfig,
) -> tuple[RootCause, ...]:
    """The walk's roots first (named by a rule, or a change no rule names), in the order
    things began; then the confirmed causes the walk did not reach that nothing explains.
    Every cause a root explains, by the rules or by the path, hangs under it."""
    outside = [r for r in chain_mod.roots(confirmed, graph) if r in res.outside]
    for pr in res.roots:
        if not pr.named:
            conf = confidence([c.score for c in pr.site.ends], (), len(pr.site.ends), cfg)
            conf = round(conf * walked.certainty, 3)
            results[pr.id] = unnamed.hypothesis(walked, pr, kb, results, path, conf)
            graph.setdefault(pr.id, [])
    for rid, by in res.explained.items():
        for r in by:
            if rid not in graph.setdefault(r, []) and rid != r:
                graph[r].append(rid)
    back = chain_mod.explained_by(graph)
    for rid in [*results]:
        h = results[rid]
        if h.verdict == "confirmed":
            results[rid] = dataclasses.replace(
                h,
                explains=tuple(t for t in graph.get(rid, ()) if t in results),
                explained_by=tuple(back.get(rid, ())),
            )
    walk_ids = {pr.id for pr in res.roots}
    first = order(
        [
            Candidate(
                p.id,
                p.site.onset,
                results[p.id].confidence,
                p.reach,
                max((c.score for c in p.site.ends), default=0.0),
            )
            for p in res.roots
        ],
        cfg,
    )
    later = order([Candidate(r, results[r].onset, results[r].confidence) for r in outside], cfg)
    by_id = {p.id: p for p in res.roots}
    # a limit goes right beside the root whose work it could not take: before it where that
    # work was only more of it (a burst a sound setting absorbs: the limit is the fault) or
    # the rules read that root as the limit's own consequence (a pool that admits everything
    # fills the batches), after it where the work came from a failure (peers restarting in
    # turn: the failure is) or the root sent no more work but slowed (a callee that holds
    # the workers longer: seed §5.2)
    for p in res.roots:
        if p.triggered_by:
            me = next(c for c in first if c.id == p.id)
            first.remove(me)
            at = next(i for i, c in enumerate(first) if c.id == p.triggered_by)
            # only more work shows a limit: where the root sent none (a slower part that
            # held the workers longer), or the work came from a failure (a part that stopped,
            # restarted or left the rotation), that root is the fault. A time of its own
            # beside the work (a TTFT nothing else explains on one replica) is no failure
            sent = by_id[p.triggered_by]
            failed = any(e.facet == "availability" or e.kind == "idle" for e in sent.site.ends)
            # a limit the work met first (a pool too small in front of an unbounded queue)
            # is nearer the fault than one behind it
            rule = kb.get(sent.id) if sent.named else None
            limit = rule is not None and rule.under_load
            load = sent.trigger and not failed and not limit
            mine = p.triggered_by in chain_mod.reach(graph, p.id)
            first.insert(at if load or mine else at + 1, me)
    out = []
    for i, c in enumerate([*first, *later]):
        found = by_id.get(c.id)
        chain = chain_mod.chain(graph, c.id, cfg)
        if found is None or c.id not in walk_ids:
            out.append(RootCause(c.id, i + 1, c.confidence, chain))
            continue
        out.append(
            RootCause(
                c.id,
                i + 1,
                c.confidence,
                chain,
                node=found.site.nodes[0],
                nodes=found.site.nodes,
                bottleneck=found.bottleneck,
                trigger=found.trigger,
                via=found.via,
                unnamed=not found.named,
                triggered_by=found.triggered_by,
                direct=not found.named or _own_ends(kb.get(c.id), found.site.ends),
            )
        )
    return in_rank_order(tuple(out))


def _own_ends(rule: Rule | None, ends: tuple[Change, ...]) -> bool:
    """Whether the walk ended on one of the rule's own signals (its `signals`), not only on
    changes whose effects the rule read."""
    return rule is not None and bool(set(rule.signals) & {c.signal for c in ends})


def diagnose(
    windows: Mapping[str, MetricFrame],
    *,
    detection: DetectionResult | None = None,
    kb: KnowledgeBase | None = None,
    at: float | None = None,
    source: Mapping[str, str] | None = None,
    config: DiagnoseConfig | None = None,
    path: PathConfig | None = None,
    topology: Topology | None = None,
) -> Diagnosis:
    """Diagnose windows["incident"] (baselines in the other windows) against the knowledge base.

    detection: a DetectionResult already computed on these windows (run here when None);
    kb: the rules (built-in ones when None); at: the moment of interest, later points ignored;
    config: the engine's constants (`DiagnoseConfig`'s defaults when None); topology: edges
    of the request path a user declared (`path/topology.py`), beside those built from the roles.
    """
    if INCIDENT not in windows:
        raise ValueError("diagnose needs an 'incident' window; got " + ", ".join(windows))
    kb = kb or load_kb()
    cfg = config or DiagnoseConfig()
    windows = readable(windows)[0]  # ±Inf, ±1e308: missing, never arithmetic (readings.py)
    path = path or PathConfig()
    det = detection if detection is not None else detect(windows, at=at)
    frame = _cut(windows[INCIDENT], at)
    base = {k: v for k, v in windows.items() if k != INCIDENT}
    ctx = Context.build(frame, det, DEFAULT_USER_FACING, cfg, base)
    tried = [_try(ctx, rule) for rule in kb.in_layer_order()]
    confirmed = {t.rule.id: t.rule for t in tried if t.verdict == "confirmed"}
    graph = chain_mod.edges(confirmed, {t.rule.id: _earliest(t) for t in tried}, cfg)
    back = chain_mod.explained_by(graph)
    results = {t.rule.id: with_setting(ctx, _result(t, graph, back, cfg)) for t in tried}
    with_cautions(results, kb, ctx.role)
    walked = trace(ctx, path, topology.edges if topology else ())
    res = resolve(walked, kb, results, confirmed, graph, path.unnamed_min_score)
    if not res.roots and not res.outside:  # nothing found at all: never "nothing"
        starts = felt(ctx, walked, results, confirmed) or unsettled(
            ctx, walked, det, results, confirmed
        )
        if starts:
            walked.symptoms.extend(starts)
            walked.extend(starts)
            res = resolve(walked, kb, results, confirmed, graph, path.unnamed_min_score)
    roots = _roots(ctx, walked, res, kb, results, confirmed, graph, cfg, path)
    for rc in roots:
        results[rc.hypothesis] = dataclasses.replace(results[rc.hypothesis], is_root=True)
    explained: set[tuple[str, str]] = set()
    for rid in [*confirmed, *(rc.hypothesis for rc in roots if rc.unnamed)]:
        for e in results[rid].evidence:
            explained.add((e.signal, e.instance))
    changes = unexplained(ctx, det.anomalies, explained)
    hyps = tuple(results[t.rule.id] for t in tried) + tuple(
        results[rc.hypothesis] for rc in roots if rc.unnamed
    )
    # an event nobody felt (a rollout's restarts) is over: listed, not an unhealthy window
    healthy = (
        not confirmed
        and not roots
        and not any(c.score >= cfg.unhealthy_shift and not is_event(c.signal) for c in changes)
    )
    missing = _missing(hyps)
    unchecked = _unchecked(kb, hyps, [r.hypothesis for r in roots], confirmed, graph)
    dx = Diagnosis(
        start=frame.start,
        end=frame.end,
        step=frame.step,
        healthy=healthy,
        summary=summarize(healthy, roots, results, changes, det, unchecked, cfg),
        scope=det.scope.to_dict(),
        root_causes=roots,
        hypotheses=hyps,
        unexplained=tuple(changes),
        next_actions=next_actions(roots, hyps, kb, unchecked, cfg),
        missing_signals=missing,
        source=dict(source or {}),
        unchecked_causes=unchecked,
    )
    # what could be read is part of the answer: with nothing readable it is "cannot judge",
    # never "nothing is wrong" (imported here: coverage reads the Diagnosis contract)
    from infersight.coverage import apply, assess

    cov = assess(windows, None, at)
    if healthy:  # an all-clear holds against the window's own start too (grounds.py rule 5)
        doubt = changed_within(windows[INCIDENT], at, cfg.unhealthy_shift)
        cov = dataclasses.replace(cov, doubts=(*cov.doubts, doubt) if doubt else cov.doubts)
    return apply(dx, cov)


def _unchecked(
    kb: KnowledgeBase,
    hyps: tuple[HypothesisResult, ...],
    root_ids: list[str],
    confirmed: Mapping[str, Rule],
    graph: Mapping[str, list[str]],
) -> tuple[UncheckedCause, ...]:
    """Inconclusive causes, undecidable on this data, that would explain a root or a confirmed
    symptom that no root's chain reaches: a root found may only be their effect (a slow vector
    DB under a cache stampede the data cannot show), so they are named with what is missing."""
    reached = set(root_ids).union(*(chain_mod.reach(graph, r) for r in root_ids))
    heads = list(root_ids) + [
        rid
        for rid, rule in confirmed.items()
        if rule.kind in ("symptom", "forecast") and rid not in reached
    ]
    out: list[UncheckedCause] = []
    for h in hyps:
        rule = kb.get(h.id)
        if h.verdict != "inconclusive" or rule is None or rule.kind != "cause":
            continue
        targets = tuple(t for t in heads if t in rule.explains)
        missing = tuple(rule.unobservable(h.missing_signals))
        if targets and missing:
            out.append(UncheckedCause(h.id, targets, missing))
    rank = {rid: i for i, rid in enumerate(heads)}
    return tuple(sorted(out, key=lambda u: min(rank[t] for t in u.would_explain)))


def _missing(hyps: tuple[HypothesisResult, ...]) -> dict[str, str]:
    need: dict[str, list[str]] = {}
    for h in hyps:
        for s in h.missing_signals:
            need.setdefault(s, []).append(h.id)
    return {s: "needed by " + ", ".join(ids) for s, ids in sorted(need.items())}


__all__ = ["UnexplainedChange", "diagnose"]
