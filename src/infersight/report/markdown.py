"""The report as Markdown, for tickets and postmortems (GitHub/GitLab flavoured).

The same order as the terminal: the headline, two lines per root cause, the chain, the causes
ruled out as ids, the coverage gaps, then the queries behind the symptom and the roots' figures;
`full=True` appends the evidence step by step, the rest, and the query of every finding. A query
is a fenced block, copied as is (a code span in a table would need `|` escaped).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence

from infersight.diagnose.result import Diagnosis, Evidence, HypothesisResult
from infersight.report.figures import format_score
from infersight.report.firstscreen import first_screen
from infersight.report.links import CATALOG_NOTE, Links, Query, link_set, queries
from infersight.report.seen_before import PastIncident
from infersight.report.seen_before import lines as seen_lines
from infersight.report.symptom import felt
from infersight.report.textsafe import clean
from infersight.report.view import (
    ReportView,
    actions_and_missing,
    build_view,
    figures,
    not_ruled_out,
    reading_mark,
    refuting,
    shown_changes,
)
from infersight.units import format_clock, format_confidence, format_window

_SPECIAL = re.compile(r"([\\`*_{}\[\]<>|#])")


def md(text: object) -> str:
    """User text made inert in Markdown: markup characters escaped, control characters shown
    as \\xNN, one line."""
    return _SPECIAL.sub(r"\\\1", clean(" ".join(str(text).split()), one_line=True))


def code(text: object) -> str:
    """User text as an inline code span (no backtick can close it early, no pipe splits a cell)."""
    t = clean(" ".join(str(text).split()), one_line=True).replace("`", "'").replace("|", "\\|")
    return f"`{t}`"


def _url(url: str) -> str:
    """A URL as a Markdown link target: nothing in it ends the target early."""
    return url.replace(" ", "%20").replace("(", "%28").replace(")", "%29").replace("<", "%3C")


def _fence(text: str) -> list[str]:
    """A fenced promql block holding `text` on one line, longer than any backtick run in it."""
    line = clean(" ".join(text.split()), one_line=True)
    ticks = "`" * max(3, max((len(r) for r in re.findall(r"`+", line)), default=0) + 1)
    return [f"{ticks}promql", line, ticks]


def _query_block(label: str, q: Query, links: Links | None) -> list[str]:
    """One query: what it shows, its family, range, step and links, then the PromQL."""
    urls = " · ".join(f"[{name.capitalize()}]({_url(u)})" for name, u in link_set(q, links).items())
    head = (
        f"{label} {code(q.signal)} ({md(q.family)}), {md(format_window(q.start, q.end))}, "
        f"step {q.step:g} s, rate window {md(q.rate_window)}"
    )
    lines = [head + (f" · {urls}" if urls else ""), ""]
    if not q.as_run:
        lines += [f"_{md(CATALOG_NOTE)}_", ""]
    return [*lines, *_fence(q.expr), ""]


def _key_queries(d: Diagnosis, links: Links | None) -> list[str]:
    """The queries of the symptom and of each root's figures (each signal once)."""
    wanted: dict[str, str] = {}
    f = felt(d) if d.judged and not d.healthy else None
    if f is not None:
        wanted[f.signal] = "Symptom"
    for r in first_screen(d).roots:
        h = d.hypothesis(r.id)
        for e in h.evidence if h is not None else ():
            if e.supports:
                wanted.setdefault(e.signal, f"#{r.rank}")
    found = queries(d, wanted)
    if not found:
        return []
    out = ["**Queries** (the series above, as they were read):", ""]
    for signal, qs in found.items():
        for q in qs:
            out += _query_block(wanted[signal], q, links)
    return out


def _all_queries(d: Diagnosis, links: Links | None) -> list[str]:
    # the queries of the findings the report lists (under an all-clear, no noise's)
    found = queries(dataclasses.replace(d, unexplained=shown_changes(d, d.unexplained)))
    if not found:
        return []
    out = ["## Queries", "", "The query each finding's series came from, as it was read:", ""]
    for qs in found.values():
        for q in qs:
            out += _query_block("-", q, links)
    return out


def _evidence_rows(evidence: tuple[Evidence, ...]) -> list[str]:
    if not evidence:
        return ["_No evidence recorded._", ""]
    rows = [
        "| | Reading | Baseline → observed | Signal @ instance | Onset | For the cause |",
        "|---|---|---|---|---|---|",
    ]
    for e in evidence:
        where = f"{e.signal} @ {e.instance}" if e.instance else e.signal
        verdict = "✔ for" if e.supports else "✘ rules it out"
        rows.append(
            f"| {reading_mark(e)} | {md(e.statement)} | {md(figures(e))} | {code(where)} "
            f"| {format_clock(e.onset)} | {verdict} |"
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


def _cluster(v: ReportView) -> list[str]:
    if not v.cluster:
        return []
    out = ["## What changed in the cluster", "", "| When | What | Change | Lasted |"]
    out.append("|---|---|---|---|")
    for c in v.cluster:
        mark = " (at a root)" if c.at_root else ""
        out.append(f"| {md(c.when)}{mark} | {md(c.subject)} | {md(c.what)} | {md(c.lasted)} |")
    return [*out, ""]


def _coverage(v: ReportView) -> list[str]:
    if not v.coverage:
        return []
    out = ["## Coverage per layer", "", "| Layer | Signals with readings | Instances |"]
    out.append("|---|---|---|")
    out += [f"| {md(layer)} | {md(count)} | {md(insts)} |" for layer, count, insts in v.coverage]
    return [*out, ""]


def _evidence(v: ReportView) -> list[str]:
    out = ["## Evidence, step by step", ""]
    for r in v.roots:
        out += [f"**Chain #{r.rank}:** {' → '.join(md(s.title) for s in r.steps)}", ""]
        for i, s in enumerate(r.steps):
            if not s.first:
                continue
            role = "root cause" if i == 0 else f"caused by {md(r.steps[i - 1].title)}"
            out += [f"### {md(s.title)} ({md(s.layer or 'unknown layer')}, {role})", ""]
            if s.hypothesis is None:
                out += ["_Not among the evaluated hypotheses._", ""]
            else:
                out += _evidence_rows(s.hypothesis.evidence)
            if i == 0 and v.also_seen.get(s.id):
                out += [f"Also seen: {md(u.statement)}" for u in v.also_seen[s.id]] + [""]
    return out


def _first_screen(d: Diagnosis) -> list[str]:
    s = first_screen(d)
    out = [f"**{md(s.headline)}**", ""]
    if s.coverage_note:
        out += [f"_{md(s.coverage_note)}_", ""]
    if s.symptom:
        out += [f"Symptom: {md(s.symptom)}", ""]
    out += [f"Window: {s.window}, step {d.step:g} s", ""]
    for r in s.roots:
        figs = f": {md('; '.join(r.figures))}" if r.figures else ""
        out.append(
            f"{r.rank}. **{md(r.title)}** · {md(r.what.removeprefix(r.title + ' · '))}{figs}"
        )
        if r.path:
            out.append(f"   - Path: {md(r.path)}")
        if r.pods:
            out.append(f"   - Pods: {md(r.pods)}")
        out += [f"   - Changed there: {md(c)}" for c in r.cluster]
        out.append(f"   - Do: {md(r.remedy)}")
        if r.runbook:
            note = f" ({md(r.runbook_note)})" if r.runbook_note else ""
            out[-1] += f" Runbook: {code(r.runbook)}{note}"
        if r.open_check:
            out.append(f"   - Not ruled out: {md(r.open_check)}")
        if r.also_seen:
            out.append(f"   - Also seen: {md('; '.join(a.text for a in r.also_seen))}")
    if s.roots:
        out.append("")
    out += [f"**Chain:** {md(c)}" for c in s.chains]
    if s.chains:
        out.append("")
    if s.ruled_out:
        out += [f"**Ruled out ({len(s.ruled_out)}):** " + ", ".join(code(i) for i in s.ruled_out)]
        out.append("")
    if s.summary:
        out += [md(s.summary), ""]
    out += [f"- Confirmed: {md(c)}" for c in s.confirmed]
    out += [f"- Changed: {md(c)}" for c in s.changes]
    if s.changes or s.confirmed:
        out.append("")
    if s.unexplained > len(s.changes):
        out += [f"**Unexplained:** {s.unexplained} changes no known cause explains", ""]
    if s.footer:
        out += [f"_{md(s.footer)}_", ""]
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


def _details(d: Diagnosis, v: ReportView) -> list[str]:
    out = _scope(v)
    out += _coverage(v)
    if v.roots:
        out += _evidence(v)
    return out


def render_markdown(
    diagnosis: Diagnosis,
    full: bool = False,
    seen: Sequence[PastIncident] | None = None,
    links: Links | None = None,
) -> str:
    """The report as a Markdown document: the first screen and the queries behind it, the past
    incidents like it (when a postmortem library was searched), and with `full` everything
    else; `links`: where the queries open (Prometheus, Grafana)."""
    from infersight.runbooks.choose import for_diagnosis

    d = for_diagnosis(diagnosis)  # each runbook the one for the stack the exporters reveal
    out = ["# infersight diagnosis", "", *_first_screen(d)]
    out += _cluster(build_view(d))
    if not full:
        out += _key_queries(d, links)
    if seen is not None:
        out += ["## Seen before", "", *[f"- {md(line)}" for line in seen_lines(seen)], ""]
    v = build_view(d)
    if not full:
        # with nothing judged, what could be read per layer is the answer
        return "\n".join(out if d.judged else out + _coverage(v))
    if d.summary and d.summary != v.headline and not v.roots:
        out += [md(d.summary), ""]
    out += _details(d, v)
    if v.unchecked:
        out += ["## Possible upstream causes that could not be checked", ""]
        out += [f"- {md(line)}" for line in v.unchecked] + [""]
    out += _hyps("Also confirmed", v.also_confirmed)
    out += _hyps("Checked and ruled out" if d.healthy else "Ruled out", v.refuted, refuted=True)
    out += _hyps("Could not be checked (data missing)", v.inconclusive)
    if v.unexplained:
        out += ["## Unexplained changes", ""]
        out += [
            f"- {md(u.statement)} ({code(f'{u.signal} @ {u.instance}')}, {md(u.layer)}, "
            f"score {format_score(u.score)})"
            for u in v.unexplained
        ]
        out.append("")
    actions, missing = actions_and_missing(d)
    if actions:
        out += ["## Next actions", ""]
        out += [f"{i}. {md(a)}" for i, a in enumerate(actions, 1)]
        out.append("")
    if missing:
        out += ["## Missing signals", ""]
        out += [f"- {code(k)}: {md(r)}" for k, r in missing]
        out.append("")
    out += _all_queries(d, links)
    if d.source:
        out += ["Source: " + md(", ".join(f"{k}={val}" for k, val in d.source.items())), ""]
    return "\n".join(out)
