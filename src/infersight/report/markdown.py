"""The report as Markdown, for tickets and postmortems (GitHub/GitLab flavoured)."""

from __future__ import annotations

import re

from infersight.diagnose.result import Diagnosis, Evidence, HypothesisResult
from infersight.report.textsafe import clean
from infersight.report.view import ReportView, build_view, figures, not_ruled_out, refuting
from infersight.units import format_clock, format_confidence

_SPECIAL = re.compile(r"([\\`*_{}\[\]<>|#])")


def md(text: object) -> str:
    """User text made inert in Markdown: markup characters escaped, control characters shown
    as \\xNN, one line."""
    return _SPECIAL.sub(r"\\\1", clean(" ".join(str(text).split()), one_line=True))


def code(text: object) -> str:
    """User text as an inline code span (no backtick can close it early, no pipe splits a cell)."""
    t = clean(" ".join(str(text).split()), one_line=True).replace("`", "'").replace("|", "\\|")
    return f"`{t}`"


def _evidence_rows(evidence: tuple[Evidence, ...]) -> list[str]:
    if not evidence:
        return ["_No evidence recorded._", ""]
    rows = [
        "| | Evidence | Baseline → observed | Signal @ instance | Onset |",
        "|---|---|---|---|---|",
    ]
    for e in evidence:
        where = f"{e.signal} @ {e.instance}" if e.instance else e.signal
        mark = "✔" if e.supports else "✘"
        rows.append(
            f"| {mark} | {md(e.statement)} | {md(figures(e))} | {code(where)} "
            f"| {format_clock(e.onset)} |"
        )
    return [*rows, ""]


def _scope(v: ReportView) -> list[str]:
    out = ["## Scope", ""]
    if not v.scope:
        out.append("- Scope: not determined")
    for item in v.scope:
        why = f" — {md(item.why)}" if item.why else ""
        out.append(f"- **{md(item.label)}:** {md(item.value)}{why}")
    out.append("")
    if v.scope_signals:
        out += ["| User-facing signal | Anomalous instances | Observed |", "|---|---|---|"]
        out += [f"| {code(s)} | {md(c)} | {md(o)} |" for s, c, o in v.scope_signals]
        out.append("")
    return out


def _coverage(v: ReportView) -> list[str]:
    if not v.coverage:
        return []
    out = ["## Coverage per layer", "", "| Layer | Signals with readings | Instances |"]
    out.append("|---|---|---|")
    out += [f"| {md(layer)} | {md(count)} | {md(insts)} |" for layer, count, insts in v.coverage]
    return [*out, ""]


def _roots(v: ReportView) -> list[str]:
    out = ["## Root causes", ""]
    for r in v.roots:
        h = r.hypothesis
        meta: list[str] = []
        if h is not None:
            meta.append(f"layer {md(h.layer)}")
            if h.onset is not None:
                meta.append(f"onset {format_clock(h.onset, seconds=True)} UTC")
            if h.instances:
                meta.append("on " + md(", ".join(h.instances)))
        out.append(f"{r.rank}. **{md(r.title)}** — confidence {r.confidence}; {'; '.join(meta)}")
        out.append(f"   - Chain: {' → '.join(md(s.title) for s in r.steps)}")
        open_check = not_ruled_out(h) if h is not None else None
        if open_check:
            out.append(f"   - Not ruled out: {md(open_check)}")
        if h is not None and h.remedy:
            out.append(f"   - Remedy: {md(h.remedy)}")
        if h is not None and h.runbook:
            out.append(f"   - Runbook: {code(h.runbook)}")
    out += ["", "## Evidence, step by step", ""]
    for r in v.roots:
        for i, s in enumerate(r.steps):
            if not s.first:
                continue
            role = "root cause" if i == 0 else f"caused by {md(r.steps[i - 1].title)}"
            out += [f"### {md(s.title)} ({md(s.layer or 'unknown layer')}, {role})", ""]
            if s.hypothesis is None:
                out += ["_Not among the evaluated hypotheses._", ""]
            else:
                out += _evidence_rows(s.hypothesis.evidence)
    return out


def _hyps(title: str, hyps: tuple[HypothesisResult, ...], refuted: bool = False) -> list[str]:
    if not hyps:
        return []
    out = [f"## {title}", ""]
    for h in hyps:
        conf = f", confidence {format_confidence(h.confidence)}" if h.verdict == "confirmed" else ""
        out += [f"### {md(h.title)} ({md(h.layer)}, {code(h.id)}{conf})", ""]
        if h.verdict == "inconclusive":
            names = ", ".join(code(s) for s in h.missing_signals) or "not stated"
            out += [f"Missing signals: {names}", ""]
        open_check = not_ruled_out(h)
        if open_check:
            out += [f"Not ruled out: {md(open_check)}", ""]
        evidence = refuting(h) if refuted else h.evidence
        if evidence:
            out += _evidence_rows(evidence)
    return out


def render_markdown(diagnosis: Diagnosis) -> str:
    """The full report as a Markdown document."""
    d = diagnosis
    v = build_view(d)
    out = ["# infersight diagnosis", "", f"**{md(v.headline)}**", ""]
    if v.coverage_note:
        out += [f"_{md(v.coverage_note)}_", ""]
    if d.summary and d.summary != v.headline:
        out += [md(d.summary), ""]
    out += [f"Window: {v.window}, step {d.step:g} s", ""]
    out += _scope(v)
    out += _coverage(v)
    if v.roots:
        out += _roots(v)
    if v.unchecked:
        out += ["## Possible upstream causes that could not be checked", ""]
        out += [f"- {md(line)}" for line in v.unchecked] + [""]
    out += _hyps("Also confirmed", v.also_confirmed)
    out += _hyps("Checked and ruled out" if d.healthy else "Ruled out", v.refuted, refuted=True)
    out += _hyps("Could not be checked (data missing)", v.inconclusive)
    if d.unexplained:
        out += ["## Unexplained changes", ""]
        out += [
            f"- {md(u.statement)} ({code(f'{u.signal} @ {u.instance}')}, {md(u.layer)}, "
            f"score {u.score:.2g})"
            for u in d.unexplained
        ]
        out.append("")
    if d.next_actions:
        out += ["## Next actions", ""]
        out += [f"{i}. {md(a)}" for i, a in enumerate(d.next_actions, 1)]
        out.append("")
    if d.missing_signals:
        out += ["## Missing signals", ""]
        out += [f"- {code(k)}: {md(r)}" for k, r in d.missing_signals.items()]
        out.append("")
    if d.source:
        out += ["Source: " + md(", ".join(f"{k}={val}" for k, val in d.source.items())), ""]
    return "\n".join(out)
