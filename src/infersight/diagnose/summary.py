"""The plain-words summary of a Diagnosis and what to do next."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from infersight.detect import DetectionResult
from infersight.diagnose.config import DEFAULT_CONFIG, DiagnoseConfig
from infersight.diagnose.kb import KnowledgeBase
from infersight.diagnose.result import (
    HypothesisResult,
    RootCause,
    UncheckedCause,
    UnexplainedChange,
)
from infersight.units import format_duration


def worth_a_look(
    changes: Sequence[UnexplainedChange], config: DiagnoseConfig = DEFAULT_CONFIG
) -> str:
    """' Worth a look: …' naming the largest unexplained change past `notable_shift`, or ''."""
    notable = config.notable_shift
    top = [c for c in changes if c.score >= notable]
    if not top:
        return ""
    best = max(top, key=lambda c: c.score)
    more = f" ({len(top) - 1} more changes past {notable:g} σ)" if len(top) > 1 else ""
    return f" Worth a look: {best.statement.split(';')[0]}{more}."


def summarize(
    healthy: bool,
    roots: Sequence[RootCause],
    results: Mapping[str, HypothesisResult],
    changes: Sequence[UnexplainedChange],
    det: DetectionResult,
    unchecked: Sequence[UncheckedCause] = (),
    config: DiagnoseConfig = DEFAULT_CONFIG,
) -> str:
    span = format_duration(det.end - det.start)
    if healthy:
        look = worth_a_look(changes, config)
        if look:
            return (
                f"No incident: no failure mode confirmed and no change large enough to call one "
                f"in the {span} window ({det.series_checked} series checked).{look}"
            )
        return (
            f"Nothing is wrong: no failure mode confirmed and no significant change in the "
            f"{span} window ({det.series_checked} series checked)."
        )
    parts: list[str] = []
    if roots:
        names = []
        for rc in roots:
            h = results[rc.hypothesis]
            where = f" on {', '.join(h.instances[:3])}" if h.instances else ""
            names.append(f"{h.title}{where}")
        head = "Root cause: " if len(roots) == 1 else f"{len(roots)} root causes: "
        parts.append(head + "; ".join(names) + ".")
        first = roots[0]
        if len(first.chain) > 1:
            parts.append("Chain: " + " → ".join(first.chain) + ".")
        gaps = results[first.hypothesis].unchecked_predictions
        if gaps:
            parts.append(
                f"Confirmed on what the data holds; not checked: {', '.join(gaps)} (missing)."
            )
    else:
        symptoms = [h.title for h in results.values() if h.verdict == "confirmed"]
        if symptoms:
            parts.append("Symptoms confirmed (" + "; ".join(symptoms) + ") but no known cause.")
        else:
            parts.append("No known failure mode confirmed.")
    for u in unchecked[:2]:
        parts.append(
            f"Could not check {results[u.hypothesis].title} (missing {', '.join(u.missing)}), "
            f"which would explain {', '.join(u.would_explain)}."
        )
    if changes:
        top = changes[0]
        more = f" and {len(changes) - 1} more" if len(changes) > 1 else ""
        parts.append(f"Unexplained change: {top.signal} on {top.instance}{more}.")
    scope = det.scope
    if scope.instances not in ("none", "unknown"):
        parts.append(f"Scope: {scope.requests} requests, {scope.timing}, {scope.instances}.")
    return " ".join(parts)


def next_actions(
    roots: Sequence[RootCause],
    hyps: Sequence[HypothesisResult],
    kb: KnowledgeBase,
    unchecked: Sequence[UncheckedCause] = (),
    config: DiagnoseConfig = DEFAULT_CONFIG,
) -> tuple[str, ...]:
    """Remedies and runbooks of the roots, then how to decide the inconclusive hypotheses
    (first those that would explain a root)."""
    out: list[str] = []
    by_id = {h.id: h for h in hyps}
    for rc in roots:
        h = by_id[rc.hypothesis]
        rb = f" (runbook: {h.runbook})" if h.runbook else ""
        if h.remedy:
            out.append(f"{h.title}: {h.remedy}{rb}")
    checks: dict[str, list[str]] = {}
    for rc in roots:  # a root's own unchecked predictions come first
        for s in by_id[rc.hypothesis].unchecked_predictions:
            checks.setdefault(s, []).append(rc.hypothesis)
    for u in unchecked:
        for s in u.missing:
            checks.setdefault(s, []).append(u.hypothesis)
    for h in hyps:
        rule = kb.get(h.id)
        if h.verdict != "inconclusive" or rule is None or rule.kind != "cause":
            continue
        for s in h.missing_signals:
            if h.id not in checks.setdefault(s, []):
                checks[s].append(h.id)
    for s, ids in list(checks.items())[: config.max_checks]:
        how = ""
        for rid in ids:
            rule = kb.get(rid)
            if rule is not None and s in rule.checks:
                how = f" ({rule.checks[s]})"
                break
        out.append(f"Make {s} available{how} to check {', '.join(ids)}.")
    return tuple(out)
