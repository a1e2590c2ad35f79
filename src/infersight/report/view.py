"""What every report says, computed once from a Diagnosis; renderers only lay it out.

Terminal, Markdown and HTML show the same sections in the same order: verdict (with partial
coverage stated next to it), scope, coverage per layer, root causes with their chains, the
evidence for each step, what was ruled out and why, what could not be checked, unexplained
changes, next actions, missing signals, source.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from infersight.diagnose.config import DiagnoseConfig
from infersight.diagnose.result import (
    Diagnosis,
    Evidence,
    HypothesisResult,
    LayerCoverage,
    UnexplainedChange,
)
from infersight.diagnose.summary import worth_a_look
from infersight.report.cluster import ChangeLine, change_lines, scope_pods
from infersight.report.consequences import attribute, earliest_onset
from infersight.report.figures import tidy
from infersight.signals import UnknownSignalError, get_signal
from infersight.units import (
    format_change,
    format_clock,
    format_confidence,
    format_value,
    format_window,
)

_AXES: dict[str, tuple[str, dict[str, str]]] = {
    "requests": (
        "Requests",
        {"all": "All requests", "part": "Part of the requests", "none": "No requests affected"},
    ),
    "timing": (
        "Timing",
        {"continuous": "Continuous", "intermittent": "Intermittent", "none": "Nothing abnormal"},
    ),
    "instances": (
        "Instances",
        {
            "one": "One instance",
            "some": "Some instances",
            "cluster": "The whole cluster",
            "none": "No instance abnormal",
        },
    ),
}
_CONSUMED = {"signals", "anomalous_instances", "total_instances"}


@dataclass(frozen=True)
class ScopeItem:
    label: str
    value: str
    why: str = ""


@dataclass(frozen=True)
class Step:
    """One link of a chain; `first` is False when an earlier chain already showed its evidence."""

    id: str
    title: str
    layer: str
    hypothesis: HypothesisResult | None
    first: bool


@dataclass(frozen=True)
class RootView:
    rank: int
    confidence: str
    id: str
    title: str
    hypothesis: HypothesisResult | None
    steps: tuple[Step, ...]

    @property
    def chain_text(self) -> str:
        return " → ".join(s.title for s in self.steps)


@dataclass(frozen=True)
class ReportView:
    diagnosis: Diagnosis
    headline: str
    window: str
    scope: tuple[ScopeItem, ...]
    scope_signals: tuple[tuple[str, str, str], ...]  # signal, "k of n" anomalous, observed
    roots: tuple[RootView, ...]
    also_confirmed: tuple[HypothesisResult, ...]
    refuted: tuple[HypothesisResult, ...]
    inconclusive: tuple[HypothesisResult, ...]
    #: one line each: causes upstream of a root that this data cannot decide
    unchecked: tuple[str, ...] = ()
    #: next to the verdict: how much could not be read ("" when everything could)
    coverage_note: str = ""
    #: per layer: layer, "k of n signals", the instances read
    coverage: tuple[tuple[str, str, str], ...] = ()
    #: per root id: the changes seen with it (its consequences no rule names)
    also_seen: dict[str, tuple[UnexplainedChange, ...]] = field(default_factory=dict)
    #: changes nothing confirmed accounts for
    unexplained: tuple[UnexplainedChange, ...] = ()
    #: what changed in the cluster in the window (on Kubernetes)
    cluster: tuple[ChangeLine, ...] = ()


def signal_unit(signal: str) -> str:
    """The canonical unit of a signal, "" for one the catalog does not know."""
    try:
        return get_signal(signal).unit
    except UnknownSignalError:
        return ""


def title_of(d: Diagnosis, hid: str) -> str:
    h = d.hypothesis(hid)
    return h.title if h is not None else hid


def figures(e: Evidence) -> str:
    """The evidence's numbers: "20 ms → 800 ms" (baseline → observed), "" when it has none."""
    return format_change(e.baseline, e.observed, e.unit or signal_unit(e.signal))


def evidence_where(e: Evidence) -> str:
    """ "dependency.vector_query_p99 @ vdb-0, from 02:17" """
    where = f"{e.signal} @ {e.instance}" if e.instance else e.signal
    return f"{where}, from {format_clock(e.onset)}" if e.onset is not None else where


def said(statement: str, *facts: str) -> bool:
    """Whether a sentence already carries these facts (a figure change "a → b" counts when both
    sides are in it), so a line does not print them twice."""
    for fact in facts:
        parts = fact.split(" → ") if " → " in fact else [fact]
        if not all(p and p in statement for p in parts):
            return False
    return True


#: a reading this close to its baseline (relative) says "level", not up or down
LEVEL_TOLERANCE = 0.02


def reading_mark(e: Evidence) -> str:
    """What a reading says, apart from what it means for a cause: ▲ up, ▼ down, = level with
    its baseline, • a reading without a baseline."""
    b, o = e.baseline, e.observed
    if b is None or o is None or not (math.isfinite(b) and math.isfinite(o)):
        return "•"
    if abs(o - b) <= LEVEL_TOLERANCE * max(abs(b), abs(o)):
        return "="
    return "▲" if o > b else "▼"


_MAKE_AVAILABLE = re.compile(r"^Make (\S+) available(?: \((.*)\))? to check .+$")


def actions_and_missing(d: Diagnosis) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...]]:
    """Next actions without the "make X available" ones the missing signals already list (their
    hint, such as which exporter to scrape, goes next to the signal), and the missing signals."""
    hints: dict[str, str] = {}
    actions: list[str] = []
    for a in d.next_actions:
        m = _MAKE_AVAILABLE.match(a)
        if m and m.group(1) in d.missing_signals:
            if m.group(2):
                hints[m.group(1)] = m.group(2)
            continue
        actions.append(a)
    missing = tuple(
        (k, f"{why}; {hints[k]}" if k in hints else why) for k, why in d.missing_signals.items()
    )
    return tuple(actions), missing


def refuting(h: HypothesisResult) -> tuple[Evidence, ...]:
    """The evidence that speaks against a hypothesis (all of it when none is marked so)."""
    against = tuple(e for e in h.evidence if not e.supports)
    return against or h.evidence


def not_ruled_out(h: HypothesisResult) -> str | None:
    """What could not challenge a confirmed hypothesis, in one line; None when every check
    that would refute it was decided."""
    if not h.refute_undecided:
        return None
    if h.refute_missing:
        return "a check that would rule it out could not be made: it needs " + ", ".join(
            h.refute_missing
        )
    return "a check that would rule it out could not be decided (no trusted readings)"


def short(value: Any, limit: int = 120) -> str:
    text = ", ".join(map(str, value)) if isinstance(value, list | tuple) else str(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _scope(scope: Mapping[str, Any]) -> tuple[ScopeItem, ...]:
    items: list[ScopeItem] = []
    for key, (label, names) in _AXES.items():
        if key in scope:
            raw = str(scope[key])
            items.append(
                ScopeItem(
                    label, names.get(raw, raw.capitalize()), short(scope.get(f"{key}_why", ""), 300)
                )
            )
    if "anomalous_instances" in scope:
        bad = list(scope["anomalous_instances"] or [])
        total = scope.get("total_instances")
        count = f"{len(bad)} of {total}" if total is not None else str(len(bad))
        items.append(ScopeItem("Anomalous instances", count, short(bad) if bad else ""))
    shown = set(_AXES) | {f"{k}_why" for k in _AXES} | _CONSUMED
    for key, value in scope.items():
        if key not in shown and value not in (None, "", [], {}):
            items.append(ScopeItem(key.replace("_", " ").capitalize(), short(value)))
    return tuple(items)


def _scope_in_pods(d: Diagnosis) -> tuple[ScopeItem, ...]:
    """The anomalous instances as pods of workloads, where the pods are known (Kubernetes)."""
    text = scope_pods(d, d.scope.get("anomalous_instances") or [])
    return (ScopeItem("Pods", text),) if text else ()


def _scope_signals(scope: Mapping[str, Any]) -> tuple[tuple[str, str, str], ...]:
    rows: list[tuple[str, str, str]] = []
    for s in scope.get("signals") or []:
        if not isinstance(s, Mapping) or "signal" not in s:
            continue
        name = str(s["signal"])
        bad = s.get("anomalous") or []
        count = f"{len(bad)} of {s.get('instances', '?')}"
        observed = s.get("observed")
        obs = format_value(observed, signal_unit(name)) if isinstance(observed, int | float) else ""
        rows.append((name, count, obs))
    return tuple(rows)


def _roots(d: Diagnosis) -> tuple[RootView, ...]:
    shown: set[str] = set()
    out: list[RootView] = []
    for r in sorted(d.root_causes, key=lambda r: r.rank):
        chain = r.chain if r.chain and r.chain[0] == r.hypothesis else (r.hypothesis, *r.chain)
        steps: list[Step] = []
        for hid in chain:
            h = d.hypothesis(hid)
            layer = h.layer if h is not None else ""
            steps.append(Step(hid, title_of(d, hid), layer, h, hid not in shown))
            shown.add(hid)
        h0 = d.hypothesis(r.hypothesis)
        out.append(
            RootView(
                rank=r.rank,
                confidence=format_confidence(r.confidence),
                id=r.hypothesis,
                title=title_of(d, r.hypothesis),
                hypothesis=h0,
                steps=tuple(steps),
            )
        )
    return tuple(out)


def coverage_note(layers: tuple[LayerCoverage, ...]) -> str:
    """One line stating partial coverage, "" when every signal was read (or none recorded).

    "Partial coverage: 9 of 41 signals readable; no reading at all in access, dependency."
    """
    total = sum(c.signals for c in layers)
    got = sum(len(c.readable) for c in layers)
    if not layers or got >= total:
        return ""
    empty = [c.layer for c in layers if c.signals and not c.readable]
    tail = f"; no reading at all in {', '.join(empty)}" if empty else ""
    return f"Partial coverage: {got} of {total} signals readable{tail}."


def _coverage_rows(layers: tuple[LayerCoverage, ...]) -> tuple[tuple[str, str, str], ...]:
    return tuple(
        (
            c.layer,
            f"{len(c.readable)} of {c.signals} signals",
            short(c.instances) if c.instances else "none",
        )
        for c in layers
    )


def _lower_first(title: str) -> str:
    """ "The cache …" → "the cache …" inside a sentence; "GPU …" stays."""
    if len(title) > 1 and title[0].isupper() and title[1].islower():
        return title[0].lower() + title[1:]
    return title


def _headline(d: Diagnosis, roots: tuple[RootView, ...]) -> str:
    if not d.judged:
        return d.summary if d.summary.startswith("Cannot judge") else "Cannot judge: " + d.summary
    if d.healthy:
        n = len(d.by_verdict("refuted"))
        unchecked = len(d.by_verdict("inconclusive"))
        tail = f", {unchecked} could not be checked" if unchecked else ""
        look = worth_a_look(d.unexplained)
        if look:
            return f"No incident: {n} hypotheses checked and ruled out{tail}.{look}"
        return f"Nothing is wrong: no anomaly found; {n} hypotheses checked and ruled out{tail}."
    if roots:
        names = "; ".join(
            f"{_lower_first(r.title) if i else r.title} ({r.confidence})"
            for i, r in enumerate(roots)
        )
        word = "Root cause" if len(roots) == 1 else f"{len(roots)} root causes"
        upstream = [title_of(d, u.hypothesis) for u in d.unchecked_causes]
        tail = f" Could not be checked upstream: {'; '.join(upstream)}." if upstream else ""
        return f"{word}: {names}.{tail}"
    if d.unexplained:
        return "Something changed, but no known cause explains it; see unexplained changes."
    return "Anomalies found, but no root cause could be confirmed."


#: at least this many instances with the same finding are shown as one line
CONDENSE_AT = 3


def condense(evidence: tuple[Evidence, ...]) -> tuple[Evidence, ...]:
    """Findings that repeat across instances (queue wait up on all 8 nodes) as one line each.

    The first instance stays the representative (its figures, its plot); the statement names
    the others and the spread of their observed values. JSON keeps every item.
    """
    groups: dict[tuple[str, str, bool], list[Evidence]] = {}
    for e in evidence:
        groups.setdefault((e.signal, e.kind, e.supports), []).append(e)
    out: list[Evidence] = []
    for items in groups.values():
        if len(items) < CONDENSE_AT:
            out += items
            continue
        first, rest = items[0], items[1:]
        others = ", ".join(e.instance for e in rest[:5]) + (" …" if len(rest) > 5 else "")
        observed = [e.observed for e in items if e.observed is not None]
        unit = first.unit or signal_unit(first.signal)
        spread = (
            f"; observed {format_value(min(observed), unit)}–{format_value(max(observed), unit)}"
            if len(observed) > 1 and min(observed) != max(observed)
            else ""
        )
        note = f" (the same on {len(rest)} more instances: {others}{spread})"
        out.append(replace(first, statement=first.statement + note))
    return tuple(out)


def _condensed(d: Diagnosis) -> Diagnosis:
    """Repeated findings condensed, every figure in the one format, and a root dated by its
    earliest evidence."""
    root_ids = {r.hypothesis for r in d.root_causes}
    hyps = tuple(
        replace(
            h,
            evidence=condense(tuple(replace(e, statement=tidy(e.statement)) for e in h.evidence)),
            onset=earliest_onset(h) if h.id in root_ids else h.onset,
        )
        for h in d.hypotheses
    )
    changes = tuple(replace(u, statement=tidy(u.statement)) for u in d.unexplained)
    return replace(d, hypotheses=hyps, unexplained=changes)


def build_view(d: Diagnosis) -> ReportView:
    d = _condensed(d)
    roots = _roots(d)
    in_chain = {s.id for r in roots for s in r.steps}
    seen = attribute(d)
    return ReportView(
        diagnosis=d,
        headline=_headline(d, roots),
        window=format_window(d.start, d.end),
        scope=_scope(d.scope) + _scope_in_pods(d),
        scope_signals=_scope_signals(d.scope),
        roots=roots,
        also_confirmed=tuple(h for h in d.by_verdict("confirmed") if h.id not in in_chain),
        refuted=tuple(d.by_verdict("refuted")),
        inconclusive=tuple(d.by_verdict("inconclusive")),
        unchecked=_unchecked(d),
        coverage_note=coverage_note(d.coverage) if d.judged else "",
        coverage=_coverage_rows(d.coverage),
        also_seen=seen.also_seen,
        unexplained=shown_changes(d, seen.unexplained),
        cluster=change_lines(d),
    )


def shown_changes(
    d: Diagnosis, changes: tuple[UnexplainedChange, ...]
) -> tuple[UnexplainedChange, ...]:
    """The unexplained changes a report lists as findings. Under an all-clear only one as strong
    as an incident (`DiagnoseConfig.unhealthy_shift`) would be, and the engine's verdict already
    says there is none: a change below it listed under "nothing is wrong" is noise read as a
    finding. The headline still names one past `notable_shift`; JSON keeps every change."""
    if not d.healthy:
        return changes
    bar = DiagnoseConfig().unhealthy_shift
    return tuple(u for u in changes if u.score >= bar)


def _unchecked(d: Diagnosis) -> tuple[str, ...]:
    return tuple(
        f"{title_of(d, u.hypothesis)} ({u.hypothesis}) would explain "
        f"{', '.join(title_of(d, t) for t in u.would_explain)}; missing "
        f"{', '.join(u.missing)}"
        for u in d.unchecked_causes
    )
