"""One self-contained HTML file: first the symptom and the root causes on one time axis (with
yesterday's same hours and a legend: `timeline.py`), then every section of the full report with a
plot per evidence signal of the root causes and their chains (a fleet-wide finding with every
instance) and a small plot per unexplained change (`sparkline.py`). What was ruled out or could
not be checked is folded (<details>, each with a ▸ marker and a hint that it opens). Each finding
carries its PromQL, linked to the Prometheus UI and Grafana Explore when their URLs are known.
Inline CSS and SVG only, no script; every string from the diagnosis goes through `html.escape`.
Readings that are not there are said, never drawn. The page is described in docs/report.md.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from infersight.diagnose.result import Diagnosis, Evidence, HypothesisResult
from infersight.frame import MetricFrame
from infersight.readings import readable
from infersight.report.figures import format_score
from infersight.report.firstscreen import RootLine, also_seen_lines, first_screen
from infersight.report.html_parts import QueryCells, fold
from infersight.report.html_parts import e as _e
from infersight.report.html_parts import query_cell as _query
from infersight.report.html_style import CSS
from infersight.report.links import Links, queries
from infersight.report.plotdata import PlotTarget, plot_series, plot_targets
from infersight.report.seen_before import PastIncident, html_section
from infersight.report.sparkline import sparkline
from infersight.report.svg import svg_plot
from infersight.report.symptom import felt
from infersight.report.timeline import render_timeline
from infersight.report.view import (
    ReportView,
    RootView,
    actions_and_missing,
    build_view,
    figures,
    not_ruled_out,
    reading_mark,
    refuting,
    signal_unit,
)
from infersight.units import format_change, format_clock, format_confidence


def _evidence_table(evidence: tuple[Evidence, ...], ctx: QueryCells | None = None) -> str:
    if not evidence:
        return '<p class="meta">No evidence recorded.</p>'
    rows = [
        "<table><tr><th class='c-mark'></th><th>Reading</th><th class='c-fig'>Baseline → observed"
        "</th><th class='c-onset'>Onset</th>"
        "<th class='c-verdict'>For the cause</th><th class='c-query'>Query</th></tr>"
    ]
    for ev in evidence:
        verdict = (
            "<td class='mark yes'>✔ for</td>"
            if ev.supports
            else "<td class='mark no'>✘ rules it out</td>"
        )
        onset = format_clock(ev.onset) if ev.onset is not None else "—"
        where = f"{ev.signal} @ {ev.instance}" if ev.instance else ev.signal
        rows.append(
            f"<tr><td class='reading'>{_e(reading_mark(ev))}</td><td>{_e(ev.statement)}"
            f"<small class='where'>{_e(where)}</small></td>"
            f"<td class='fig'>{_e(figures(ev))}</td>"
            f"<td>{_e(onset)}</td>{verdict}<td class='query'>{_query(ctx, ev.signal)}</td></tr>"
        )
    return "".join(rows) + "</table>"


def _plot(t: PlotTarget, windows: Mapping[str, MetricFrame], ctx: QueryCells | None) -> str:
    ps = plot_series(windows, t.signal, t.instance, t.peers)
    where = f"{t.signal} @ {t.instance}" if t.instance else t.signal
    if ps is None:  # said, not drawn: no line stands in for readings that are not there
        return (
            f"<figure class='no-data'><figcaption>{_e(where)} <small>{_e(t.statement)}</small>"
            "</figcaption><p class='missing'>No readings of this series in the window: "
            "nothing to plot.</p></figure>"
        )
    if ps.peers:
        where += f" and {len(ps.peers)} more instances"
    change = format_change(t.figures[0], t.figures[1], t.unit)
    svg = svg_plot(ps, t.unit, t.onset, f"{where}: {change}", t.signal, t.instance)
    caption = f"{_e(where)} <small>{_e(t.statement)}</small>"
    return (
        f"<figure><figcaption>{caption}</figcaption>{svg}"
        f"<div class='query'>{_query(ctx, t.signal)}</div></figure>"
    )


def _timeline(d: Diagnosis, windows: Mapping[str, MetricFrame] | None, ctx: QueryCells) -> str:
    """The timeline, the symptom's query in its caption."""
    f = felt(d)
    return render_timeline(d, windows, _query(ctx, f.signal) if f is not None else "")


AT_ROOT = ' class="at-root"'


def _cluster(v: ReportView) -> str:
    if not v.cluster:
        return ""
    rows = "".join(
        f"<tr{AT_ROOT if c.at_root else ''}><td>{_e(c.when)}</td>"
        f"<td>{_e(c.subject)}</td><td>{_e(c.what)}</td><td>{_e(c.lasted)}</td></tr>"
        for c in v.cluster
    )
    head = "<tr><th>When</th><th>What</th><th>Change</th><th>Lasted</th></tr>"
    return (
        '<section id="cluster"><h2>What changed in the cluster</h2>'
        f"<table><thead>{head}</thead><tbody>{rows}</tbody></table></section>"
    )


def _scope(v: ReportView) -> str:
    cards = (
        "".join(
            f"<div><b>{_e(i.label)}</b><span>{_e(i.value)}</span><small>{_e(i.why)}</small></div>"
            for i in v.scope
        )
        or "<div><b>Scope</b><span>not determined</span></div>"
    )
    out = f'<section id="scope"><h2>Scope</h2><div class="scope">{cards}</div>'
    if v.scope_signals:
        rows = "".join(
            f"<tr><td><code>{_e(s)}</code></td><td>{_e(c)}</td><td class='fig'>{_e(o)}</td></tr>"
            for s, c, o in v.scope_signals
        )
        out += (
            "<h3>User-facing signals</h3><table><tr><th>Signal</th><th>Anomalous instances</th>"
            f"<th>Observed</th></tr>{rows}</table>"
        )
    return out + "</section>"


def _coverage(v: ReportView) -> str:
    if not v.coverage:
        return ""
    rows = "".join(
        f"<tr><td>{_e(layer)}</td><td>{_e(count)}</td><td>{_e(insts)}</td></tr>"
        for layer, count, insts in v.coverage
    )
    gaps = ", ".join(layer for layer, count, _ in v.coverage if count.startswith("0 of"))
    note = f"<span class='meta'>no reading at all in {_e(gaps)}</span>" if gaps else ""
    table = (
        "<table><tr><th>Layer</th><th>Signals with readings</th>"
        f"<th>Instances</th></tr>{rows}</table>"
    )
    folded = fold("fold", "<h2>Coverage per layer</h2>", table, tail=note)
    return f'<section id="coverage">{folded}</section>'


def _root(r: RootView, v: ReportView, line: RootLine | None = None) -> str:
    h = r.hypothesis
    pct = r.confidence.rstrip("%") if r.confidence.endswith("%") else "0"
    meta = [f"<span class='badge'>{_e(h.layer)}</span>"] if h is not None else []
    if h is not None and h.onset is not None:
        meta.append(f"onset {_e(format_clock(h.onset, seconds=True))} UTC")
    if h is not None and h.instances:
        meta.append(f"on {_e(', '.join(h.instances))}")
    chain = "".join(
        f"<li class='{'root-step' if i == 0 else 'step'}'>{_e(s.title)}</li>"
        for i, s in enumerate(r.steps)
    )
    out = (
        f"<div class='card root'><h3><span class='rank'>#{r.rank}</span>{_e(r.title)}</h3>"
        f"<div class='meta'>confidence <span class='meter'><i style='width:{_e(pct)}%'></i></span>"
        f"<b>{_e(r.confidence)}</b> {' · '.join(meta)}</div>"
        f"<ol class='chain' aria-label='causal chain'>{chain}</ol>"
    )
    if line is not None and line.path:
        out += f"<p class='path'><b>Path:</b> {_e(line.path)}</p>"
    if line is not None and line.pods:
        out += f"<p class='path'><b>Pods:</b> {_e(line.pods)}</p>"
    if line is not None and line.cluster:
        items = "".join(f"<li>{_e(c)}</li>" for c in line.cluster)
        out += f"<div class='also'><b>Changed there</b><ul class='plain'>{items}</ul></div>"
    open_check = not_ruled_out(h) if h is not None else None
    if open_check:
        out += f"<p class='missing'><b>Not ruled out:</b> {_e(open_check)}</p>"
    if h is not None and h.remedy:
        remedy = line.remedy if line is not None else h.remedy
        out += f"<p class='remedy'><b>Remedy:</b> {_e(remedy)}</p>"
    if h is not None and h.runbook:
        out += f"<p class='remedy'><b>Runbook:</b> <code>{_e(h.runbook)}</code></p>"
    also = also_seen_lines(v.also_seen.get(r.id, ()))
    if also:
        items = "".join(f"<li>{_e(a.text)}</li>" for a in also)
        out += f"<div class='also'><b>Also seen</b><ul class='plain'>{items}</ul></div>"
    return out + "</div>"


def _steps(
    d: Diagnosis, v: ReportView, windows: Mapping[str, MetricFrame] | None, ctx: QueryCells
) -> str:
    """Each step's evidence table and plots: a root's open, the steps it caused folded (their
    evidence is there to check, the answer is the root's)."""
    targets = plot_targets(d) if windows else []  # the uncondensed findings: every instance
    parts = ['<section id="evidence"><h2>Evidence, step by step</h2>']
    for r in v.roots:
        for i, s in enumerate(r.steps):
            if not s.first:
                continue
            role = "root cause" if i == 0 else "caused by " + _e(r.steps[i - 1].title)
            head = (
                f"<h3>{_e(s.title)} <span class='badge'>{_e(s.layer or 'unknown layer')}</span>"
                f" <span class='meta'>{role}</span></h3>"
            )
            body: list[str] = []
            if s.hypothesis is None:
                body.append("<p class='meta'>Not among the evaluated hypotheses.</p>")
            else:
                body.append(_evidence_table(s.hypothesis.evidence, ctx))
                plots = (
                    [_plot(t, windows, ctx) for t in targets if t.hypothesis == s.id]
                    if windows
                    else []
                )
                if any(plots):
                    body.append(f"<div class='plots'>{''.join(plots)}</div>")
            parts.append(fold("step", head, "".join(body), "open the evidence", opened=i == 0))
    return "".join(parts) + "</section>"


def _hyp_section(
    sid: str,
    title: str,
    hyps: tuple[HypothesisResult, ...],
    why: str,
    ctx: QueryCells,
    folded: bool = False,
) -> str:
    """One section per verdict; `folded`: the section and each hypothesis in it are closed
    <details> (what was ruled out is there to check, not to read first)."""
    if not hyps:
        return ""
    parts: list[str] = []
    for h in hyps:
        head = f"{_e(h.title)} <span class='badge'>{_e(h.layer)}</span> <code>{_e(h.id)}</code>"
        if h.verdict == "confirmed":
            head += f" <span class='badge bad'>{_e(format_confidence(h.confidence))}</span>"
        body: list[str] = []
        if h.verdict == "inconclusive":
            names = ", ".join(h.missing_signals) or "not stated"
            body.append(f"<p class='missing'>Missing signals: <code>{_e(names)}</code></p>")
        open_check = not_ruled_out(h)
        if open_check:
            body.append(f"<p class='missing'><b>Not ruled out:</b> {_e(open_check)}</p>")
        evidence = refuting(h) if why == "refuted" else h.evidence
        if evidence:
            body.append(_evidence_table(evidence, ctx))
        if folded:
            parts.append(fold("hyp", head, "".join(body)))
        else:
            parts.append(f"<h3>{head}</h3>{''.join(body)}")
    heading = f"{_e(title)} <span class='badge'>{len(hyps)}</span>"
    if folded:
        ids = ", ".join(h.id for h in hyps)
        tail = f"<span class='meta'>{_e(ids)}</span>"
        box = fold("fold", f"<h2>{heading}</h2>", "".join(parts), tail=tail)
        return f'<section id="{sid}">{box}</section>'
    return f'<section id="{sid}"><h2>{heading}</h2>{"".join(parts)}</section>'


def _list_section(
    sid: str, title: str, items: list[str], ordered: bool = False, folded: bool = False
) -> str:
    if not items:
        return ""
    tag = "ol" if ordered else "ul"
    body = "".join(f"<li>{i}</li>" for i in items)
    heading = f"{_e(title)} <span class='badge'>{len(items)}</span>" if folded else _e(title)
    listing = f"<{tag} class='plain'>{body}</{tag}>"
    if folded:
        return f'<section id="{sid}">{fold("fold", f"<h2>{heading}</h2>", listing)}</section>'
    return f'<section id="{sid}"><h2>{heading}</h2>{listing}</section>'


def _changes(
    v: ReportView, windows: Mapping[str, MetricFrame] | None, ctx: QueryCells
) -> list[str]:
    """Each change no rule explains, with a small plot of its series (the onset marked) and
    its query when the frames are there, as a finding has."""
    out: list[str] = []
    for u in v.unexplained:
        text = (
            f"{_e(u.statement)} <span class='meta'><code>{_e(u.signal)} @ {_e(u.instance)}"
            f"</code> · {_e(u.layer)} · score {_e(format_score(u.score))}</span>"
        )
        if windows:
            spark = sparkline(windows, u.signal, u.instance, signal_unit(u.signal), u.onset)
            text = (
                f"<div class='change'>{spark}<div>{text}"
                f"<div class='query'>{_query(ctx, u.signal)}</div></div></div>"
            )
        out.append(text)
    return out


def render_html(
    diagnosis: Diagnosis,
    windows: Mapping[str, MetricFrame] | None = None,
    links: Links | None = None,
    seen: Sequence[PastIncident] | None = None,
) -> str:
    """The report as one self-contained HTML document; past incidents like it follow the root
    causes when a postmortem library was searched."""
    d = diagnosis
    if windows is not None:  # the plots draw what the analysis read: ±Inf, ±1e308 are gaps
        windows = readable(windows)[0]
    v = build_view(d)
    state = "unjudged" if not d.judged else "healthy" if d.healthy else "incident"
    badge = (
        "<span class='badge warn'>cannot judge</span>"
        if not d.judged
        else "<span class='badge ok'>healthy</span>"
        if d.healthy
        else f"<span class='badge bad'>{len(v.roots)} root cause(s)</span>"
    )
    note = f"<p class='missing'>{_e(v.coverage_note)}</p>" if v.coverage_note else ""
    summary = (
        f"<p>{_e(d.summary)}</p>" if d.summary and d.summary != v.headline and not v.roots else ""
    )
    ctx = QueryCells(queries(d), links)
    source = ", ".join(f"{k}={val}" for k, val in d.source.items())
    screen = first_screen(d)
    symptom = (
        f"<p class='symptom'><b>Symptom:</b> {_e(screen.symptom)}</p>" if screen.symptom else ""
    )
    body = [
        f"<header class='top {state}'><div class='brand'>infersight diagnosis {badge}</div>",
        f"<h1>{_e(v.headline)}</h1>{note}{summary}{symptom}",
        f"<div class='meta'>Window {_e(v.window)} · step {_e(f'{d.step:g}')} s"
        + (f" · source {_e(source)}" if source else "")
        + "</div></header>",
        _timeline(d, windows, ctx),
    ]
    if v.roots:
        body.append('<section id="roots"><h2>Root causes</h2>')
        lines = {r.rank: r for r in screen.roots}
        body += [_root(r, v, lines.get(r.rank)) for r in v.roots]
        body.append("</section>")
    body.append(html_section(seen))
    body += [_scope(v), _cluster(v), _coverage(v)]
    if v.roots:
        body.append(_steps(d, v, windows, ctx))
    body.append(
        _list_section(
            "upstream-unchecked",
            "Possible upstream causes that could not be checked",
            [_e(line) for line in v.unchecked],
        )
    )
    body.append(
        _hyp_section("confirmed", "Also confirmed", v.also_confirmed, "confirmed", ctx, folded=True)
    )
    ruled = "Checked and ruled out" if d.healthy else "Ruled out"
    body.append(_hyp_section("ruled-out", ruled, v.refuted, "refuted", ctx, folded=True))
    unchecked_title = "Could not be checked (data missing)"
    body.append(
        _hyp_section("unchecked", unchecked_title, v.inconclusive, "missing", ctx, folded=True)
    )
    body.append(_list_section("unexplained", "Unexplained changes", _changes(v, windows, ctx)))
    actions, missing = actions_and_missing(d)
    body.append(_list_section("next", "Next actions", [_e(a) for a in actions], True))
    body.append(
        _list_section(
            "missing",
            "Missing signals",
            [f"<code>{_e(k)}</code>: {_e(r)}" for k, r in missing],
            folded=True,
        )
    )
    body.append(
        f"<footer>Generated by infersight from a diagnosis (schema v{d.schema_version}). "
        "All times are UTC.</footer>"
    )
    return (
        "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>infersight · {_e(v.headline)}</title><style>{CSS}</style></head>"
        f"<body><main>{''.join(body)}</main></body></html>\n"
    )
