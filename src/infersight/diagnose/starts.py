"""Where the request-path walk sets out when nothing else started it and no rule confirmed a
cause: never "nothing" for a window that is not healthy (seed §2.3; docs/path.md).
"""

from __future__ import annotations

from collections.abc import Mapping

from infersight.detect import DetectionResult
from infersight.diagnose.context import Context
from infersight.diagnose.fallback import unexplained
from infersight.diagnose.kb import Rule
from infersight.diagnose.path import Change, Walk
from infersight.diagnose.result import HypothesisResult
from infersight.signals import is_event


def felt(
    ctx: Context,
    walked: Walk,
    results: Mapping[str, HypothesisResult],
    confirmed: Mapping[str, Rule],
) -> list[Change]:
    """A symptom rule holds on changes too faint to date an incident: the users felt it, and
    where it came from is walked as any symptom is (seed §2.3), less surely by as much as the
    changes fall short (`Walk.certainty`)."""
    want = {
        (e.signal, e.instance)
        for rid, rule in confirmed.items()
        if rule.kind == "symptom"
        for e in results[rid].evidence
        if e.supports
    }
    # read against the window's own first minutes alone, a change must be as strong as one
    # nobody felt (a lab warming up wobbles that much), as in `path.walk.symptoms`
    floor = {False: ctx.config.symptom_min_score, True: walked.reader.config.unfelt_min_score}
    out = [
        c
        for c in walked.reader.changes
        if (c.signal, c.instance) in want
        and c.bad
        and c.direction == "up"
        and (not c.weak or c.score >= floor[True])
    ]
    if out:
        walked.certainty = max(
            min(1.0, c.score / floor[c.weak]) if floor[c.weak] > 0 else 1.0 for c in out
        )
    return out


def unsettled(
    ctx: Context,
    walked: Walk,
    det: DetectionResult,
    results: Mapping[str, HypothesisResult],
    confirmed: Mapping[str, Rule],
) -> list[Change]:
    """Where nothing was found to start from, the changes that make the window no healthy
    one (`DiagnoseConfig.unhealthy_shift`): a climb nobody felt yet is still walked to where
    it began, so a window that is not healthy always names a place, never nothing. A slow
    climb alone is not one of them: it is no incident until it nears a limit, which is the
    forecasts' to judge (a fleet's memory 3% up over the day is a steep shift on a flat line).
    Nor is an event nobody felt (a routine rollout's restarts): it is over."""
    explained = {(e.signal, e.instance) for rid in confirmed for e in results[rid].evidence}
    strong = {
        (u.signal, u.instance)
        for u in unexplained(ctx, det.anomalies, explained)
        if u.score >= ctx.config.unhealthy_shift and not is_event(u.signal)
    }
    return [
        c
        for c in walked.reader.changes
        if (c.signal, c.instance) in strong and c.bad and not c.weak and c.kind != "trend"
    ]
