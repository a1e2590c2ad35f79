"""A blameless postmortem draft from a diagnosis: front matter and a Markdown body.

Seed §6.3: a record without emotion or blame, with the timeline, the symptoms, the
investigation, the root causes, the fixes and the improvements, so the next responder finds it.
What the diagnosis knows is filled in with its figures; what only people know is left as a
marked blank (`_to fill in_`), never guessed.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

from infersight.diagnose.result import Diagnosis, Evidence, HypothesisResult
from infersight.postmortem.config import PostmortemConfig
from infersight.postmortem.frontmatter import FrontMatter, Signature, slug
from infersight.postmortem.inputs import Action, Incident
from infersight.postmortem.sections import RULED_OUT, SEEN_BEFORE, SYMPTOMS, UNEXPLAINED
from infersight.postmortem.signature import from_diagnosis
from infersight.report.firstscreen import figure
from infersight.report.markdown import code, md
from infersight.report.view import refuting

BLANK = "_to fill in_"
BLAMELESS = (
    "> This review is blameless. It records what happened, what the people involved knew at "
    "each moment, and what the systems made easy or hard, so that the next responder finds the "
    "way faster. It does not ask who was at fault: everyone acted in good faith on what they "
    "knew at the time."
)
#: evidence lines shown per hypothesis: the strongest readings, not the whole fleet
_LINES = 3


def _clock(ts: float) -> str:
    return dt.datetime.fromtimestamp(ts, dt.UTC).strftime("%Y-%m-%d %H:%M")


def _utc(ts: float) -> dt.datetime:
    return dt.datetime.fromtimestamp(ts, dt.UTC)


def _first_onset(d: Diagnosis) -> float:
    onsets = [h.onset for h in d.by_verdict("confirmed") if h.onset is not None]
    return min(onsets) if onsets else d.start


def _title(d: Diagnosis) -> str:
    titles = [h.title for r in d.root_causes if (h := d.hypothesis(r.hypothesis)) is not None]
    if titles:
        return "; ".join(titles[:2]) + ("; …" if len(titles) > 2 else "")
    return d.summary.split(". ")[0] if d.summary else "Incident"


def _supporting(h: HypothesisResult, n: int = _LINES) -> list[Evidence]:
    """The first reading of each signal that speaks for it, at most n."""
    out: dict[str, Evidence] = {}
    for e in h.evidence:
        if e.supports and e.signal not in out:
            out[e.signal] = e
    return list(out.values())[:n]


def _timeline(d: Diagnosis, actions: Sequence[Action]) -> list[str]:
    rows: list[tuple[float, str, str]] = [
        (d.start, "The window the diagnosis read begins", "diagnosis")
    ]
    for h in d.by_verdict("confirmed"):
        if h.onset is None:
            continue
        role = "root cause" if h.is_root else "symptom" if not h.explains else "consequence"
        ev = _supporting(h, 1)
        fig = f": {figure(ev[0])}" if ev else ""
        rows.append((h.onset, f"Began: {h.title} ({role}, {h.id}){fig}", "diagnosis, onset"))
    rows += [(a.ts, a.what, a.source) for a in actions]
    rows.sort(key=lambda r: r[0])
    out = ["| Time (UTC) | What happened | From |", "|---|---|---|"]
    out += [f"| {_clock(ts)} | {md(what)} | {md(src)} |" for ts, what, src in rows]
    for blank in (
        "First alert or report reached a person",
        "Bleeding stopped",
        "Service back to normal",
    ):
        out.append(f"| {BLANK} | {blank} | people |")
    return out


def _symptoms(d: Diagnosis) -> list[str]:
    out = []
    scope = d.scope or {}
    if scope.get("requests"):
        timing, where = md(scope.get("timing", "?")), md(scope.get("instances", "?"))
        out.append(
            f"- Scope: {md(scope.get('requests'))} of the requests, {timing}, {where} "
            f"({md(scope.get('instances_why', ''))})."
        )
    for h in d.by_verdict("confirmed"):
        if h.is_root:
            continue
        figs = "; ".join(code(figure(e)) for e in _supporting(h))
        out.append(f"- **{md(h.title)}** ({code(h.id)}, {md(h.layer)}): {figs or 'no figures'}")
    if not any(not h.is_root for h in d.by_verdict("confirmed")):
        out.append(f"- No symptom was confirmed by the diagnosis; {BLANK}")
    return out


def _ruled_out(d: Diagnosis) -> list[str]:
    out = []
    for h in d.by_verdict("refuted"):
        against = refuting(h)
        why = md(against[0].statement) if against else "no reading recorded"
        out.append(f"- {md(h.title)} ({code(h.id)}): {why}")
    lacking = d.by_verdict("inconclusive")
    if lacking:
        out.append("")
        out.append("Could not be checked, for want of data (not ruled out):")
        out.append("")
        for h in lacking:
            missing = ", ".join(code(s) for s in h.missing_signals) or "its signals"
            out.append(f"- {md(h.title)} ({code(h.id)}): needs {missing}")
    return out or ["- Nothing was ruled out by the diagnosis."]


def _roots(d: Diagnosis) -> list[str]:
    out: list[str] = []
    for r in sorted(d.root_causes, key=lambda r: r.rank):
        h = d.hypothesis(r.hypothesis)
        if h is None:
            continue
        at = f", from {_clock(h.onset)}" if h.onset is not None else ""
        out.append(
            f"{r.rank}. **{md(h.title)}** ({code(h.id)}, {md(h.layer)} layer, confidence "
            f"{r.confidence:.0%}{at}; seed §{md(h.seed)})"
        )
        out += [f"   - {md(e.statement)}" for e in _supporting(h)]
        out.append(f"   - Chain: {' → '.join(code(step) for step in r.chain)}")
    if d.unchecked_causes:
        out += ["", "Upstream causes that could not be checked:", ""]
        for u in d.unchecked_causes:
            explains = ", ".join(code(w) for w in u.would_explain)
            needs = ", ".join(code(m) for m in u.missing)
            out.append(f"- {code(u.hypothesis)} would explain {explains}; needs {needs}")
    return out or ["No root cause was confirmed; " + BLANK]


def _remedies(d: Diagnosis) -> list[tuple[str, str]]:
    out = []
    for r in sorted(d.root_causes, key=lambda r: r.rank):
        h = d.hypothesis(r.hypothesis)
        if h is not None and h.remedy:
            book = f" (runbook: {h.runbook})" if h.runbook else ""
            out.append((h.title, h.remedy + book))
    return out


def _action_items(d: Diagnosis) -> list[str]:
    rows = ["| Action | Owner | Due | Status |", "|---|---|---|---|"]
    for title, remedy in _remedies(d):
        rows.append(f"| Lasting fix for: {md(title)}: {md(remedy)} | | | open |")
    lacking = sorted(d.missing_signals)
    if lacking:
        more = f" and {len(lacking) - 3} more" if len(lacking) > 3 else ""
        names = ", ".join(code(s) for s in lacking[:3]) + more
        rows.append(f"| Collect {names}, so the causes they decide can be checked | | | open |")
    rows.append("| Add an alert that would have caught this sooner | | | open |")
    return rows


def body(incident: Incident, seen: Sequence[str] = ()) -> str:
    """The Markdown body; `seen` lines list similar past incidents when a library was given."""
    from infersight.runbooks.choose import for_diagnosis

    d = for_diagnosis(incident.diagnosis)  # each runbook the one for the stack found
    out = [f"# {md(_title(d))}", "", BLAMELESS, "", "## Summary", "", md(d.summary), ""]
    out += [f"Diagnosis source: {md(incident.origin)}", ""] if incident.origin else []
    out += ["## Timeline", "", *_timeline(d, incident.actions), ""]
    out += [f"## {SYMPTOMS}", "", *_symptoms(d), ""]
    out += [f"## {RULED_OUT}", "", *_ruled_out(d), ""]
    if d.unexplained:
        out += [UNEXPLAINED, ""]
        out += [f"- {md(u.statement)}" for u in d.unexplained[:8]] + [""]
    out += ["## Root causes and the chain", "", *_roots(d), ""]
    out += ["## Remediation", "", "Suggested by the diagnosis:", ""]
    out += [f"- {md(t)}: {md(r)}" for t, r in _remedies(d)] or ["- none"]
    out += ["", f"What was done, and when: {BLANK}", ""]
    out += ["## Action items", "", *_action_items(d), ""]
    out += [
        "## What made it hard to see",
        "",
        f"Which signal, tool or document would have shortened the search? {BLANK}",
        "",
    ]
    if seen:
        out += [f"## {SEEN_BEFORE}", "", *[f"- {md(line)}" for line in seen], ""]
    return "\n".join(out)


def front_matter(
    incident: Incident,
    services: Sequence[str] = (),
    today: dt.date | None = None,
    cfg: PostmortemConfig | None = None,
) -> FrontMatter:
    d = incident.diagnosis
    sig = from_diagnosis(d, cfg)
    began = _first_onset(d)
    name = sig.root_causes[0] if sig.root_causes else _title(d)
    return FrontMatter(
        id=f"{_utc(began).date().isoformat()}-{slug(name.replace('_', ' '))}",
        title=_title(d),
        status="draft",
        severity="unset",
        date=_utc(began).date(),
        started=_utc(began),
        detected=None,
        resolved=None,
        written=today or dt.datetime.now(dt.UTC).date(),
        services=list(services),
        layers=list(sig.layers),
        root_causes=list(sig.root_causes),
        signals=list(sig.signals),
        fixed_by="",
        signature=Signature(onset_order=list(sig.onset_order), figures=dict(sig.figures)),
    )
