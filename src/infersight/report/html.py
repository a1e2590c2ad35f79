"""One self-contained HTML file: every section of the terminal report plus a plot per evidence
signal of the root causes and their chains. Inline CSS and SVG only, no script, no external
reference; every string from the diagnosis goes through `html.escape`.
"""

from __future__ import annotations

from collections.abc import Mapping
from html import escape

from infersight.diagnose.result import Diagnosis, Evidence, HypothesisResult
from infersight.frame import MetricFrame
from infersight.report.html_style import CSS
from infersight.report.links import Links
from infersight.report.plotdata import PlotTarget, plot_series, plot_targets
from infersight.report.svg import svg_plot
from infersight.report.textsafe import clean
from infersight.report.view import (
    ReportView,
    RootView,
    build_view,
    figures,
    not_ruled_out,
    refuting,
)
from infersight.units import format_change, format_clock, format_confidence


def _e(text: object) -> str:
    return escape(clean(text), quote=True)


def _evidence_table(evidence: tuple[Evidence, ...]) -> str:
    if not evidence:
        return '<p class="meta">No evidence recorded.</p>'
    rows = [
        "<table><tr><th class='c-mark'></th><th>Evidence</th><th class='c-fig'>Baseline → observed"
        "</th><th class='c-where'>Signal @ instance</th><th class='c-onset'>Onset</th></tr>"
    ]
    for ev in evidence:
        mark = '<td class="mark yes">✔</td>' if ev.supports else '<td class="mark no">✘</td>'
        onset = format_clock(ev.onset) if ev.onset is not None else "—"
        where = f"{ev.signal} @ {ev.instance}" if ev.instance else ev.signal
        rows.append(
            f"<tr>{mark}<td>{_e(ev.statement)}</td><td class='fig'>{_e(figures(ev))}</td>"
            f"<td class='where'>{_e(where)}</td><td>{_e(onset)}</td></tr>"
        )
    return "".join(rows) + "</table>"


def _plot(t: PlotTarget, windows: Mapping[str, MetricFrame]) -> str:
    ps = plot_series(windows, t.signal, t.instance)
    if ps is None:
        return ""
    where = f"{t.signal} @ {t.instance}" if t.instance else t.signal
    change = format_change(t.figures[0], t.figures[1], t.unit)
    svg = svg_plot(ps, t.unit, t.onset, f"{where}: {change}", t.signal, t.instance)
    caption = f"{_e(where)} <small>{_e(t.statement)}</small>"
    return f"<figure><figcaption>{caption}</figcaption>{svg}</figure>"


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
    return (
        '<section id="coverage"><h2>Coverage per layer</h2><table><tr><th>Layer</th>'
        f"<th>Signals with readings</th><th>Instances</th></tr>{rows}</table></section>"
    )


def _root(r: RootView) -> str:
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
    open_check = not_ruled_out(h) if h is not None else None
    if open_check:
        out += f"<p class='missing'><b>Not ruled out:</b> {_e(open_check)}</p>"
    if h is not None and h.remedy:
        out += f"<p class='remedy'><b>Remedy:</b> {_e(h.remedy)}</p>"
    if h is not None and h.runbook:
        out += f"<p class='remedy'><b>Runbook:</b> <code>{_e(h.runbook)}</code></p>"
    return out + "</div>"


def _steps(v: ReportView, windows: Mapping[str, MetricFrame] | None) -> str:
    targets = plot_targets(v.diagnosis) if windows else []
    parts = ['<section id="evidence"><h2>Evidence, step by step</h2>']
    for r in v.roots:
        for i, s in enumerate(r.steps):
            if not s.first:
                continue
            role = "root cause" if i == 0 else "caused by " + _e(r.steps[i - 1].title)
            parts.append(
                f"<h3>{_e(s.title)} <span class='badge'>{_e(s.layer or 'unknown layer')}</span>"
                f" <span class='meta'>{role}</span></h3>"
            )
            if s.hypothesis is None:
                parts.append("<p class='meta'>Not among the evaluated hypotheses.</p>")
                continue
            parts.append(_evidence_table(s.hypothesis.evidence))
            plots = [_plot(t, windows) for t in targets if t.hypothesis == s.id] if windows else []
            if any(plots):
                parts.append(f"<div class='plots'>{''.join(plots)}</div>")
    return "".join(parts) + "</section>"


def _hyp_section(sid: str, title: str, hyps: tuple[HypothesisResult, ...], why: str) -> str:
    if not hyps:
        return ""
    parts = [f'<section id="{sid}"><h2>{_e(title)} <span class="badge">{len(hyps)}</span></h2>']
    for h in hyps:
        head = f"<h3>{_e(h.title)} <span class='badge'>{_e(h.layer)}</span> <code>{_e(h.id)}</code>"
        if h.verdict == "confirmed":
            head += f" <span class='badge bad'>{_e(format_confidence(h.confidence))}</span>"
        parts.append(head + "</h3>")
        if h.verdict == "inconclusive":
            names = ", ".join(h.missing_signals) or "not stated"
            parts.append(f"<p class='missing'>Missing signals: <code>{_e(names)}</code></p>")
        open_check = not_ruled_out(h)
        if open_check:
            parts.append(f"<p class='missing'><b>Not ruled out:</b> {_e(open_check)}</p>")
        evidence = refuting(h) if why == "refuted" else h.evidence
        if evidence:
            parts.append(_evidence_table(evidence))
    return "".join(parts) + "</section>"


def _list_section(sid: str, title: str, items: list[str], ordered: bool = False) -> str:
    if not items:
        return ""
    tag = "ol" if ordered else "ul"
    body = "".join(f"<li>{i}</li>" for i in items)
    return f'<section id="{sid}"><h2>{_e(title)}</h2><{tag} class="plain">{body}</{tag}></section>'


def render_html(
    diagnosis: Diagnosis,
    windows: Mapping[str, MetricFrame] | None = None,
    links: Links | None = None,
) -> str:
    """The report as one self-contained HTML document."""
    d = diagnosis
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
    summary = f"<p>{_e(d.summary)}</p>" if d.summary and d.summary != v.headline else ""
    source = ", ".join(f"{k}={val}" for k, val in d.source.items())
    body = [
        f"<header class='top {state}'><div class='brand'>infersight diagnosis {badge}</div>",
        f"<h1>{_e(v.headline)}</h1>{note}{summary}",
        f"<div class='meta'>Window {_e(v.window)} · step {_e(f'{d.step:g}')} s"
        + (f" · source {_e(source)}" if source else "")
        + "</div></header>",
        _scope(v),
        _coverage(v),
    ]
    if v.roots:
        body.append('<section id="roots"><h2>Root causes</h2>')
        body += [_root(r) for r in v.roots]
        body.append("</section>")
        body.append(_steps(v, windows))
    body.append(
        _list_section(
            "upstream-unchecked",
            "Possible upstream causes that could not be checked",
            [_e(line) for line in v.unchecked],
        )
    )
    body.append(_hyp_section("confirmed", "Also confirmed", v.also_confirmed, "confirmed"))
    ruled = "Checked and ruled out" if d.healthy else "Ruled out"
    body.append(_hyp_section("ruled-out", ruled, v.refuted, "refuted"))
    body.append(
        _hyp_section("unchecked", "Could not be checked (data missing)", v.inconclusive, "missing")
    )
    body.append(
        _list_section(
            "unexplained",
            "Unexplained changes",
            [
                f"{_e(u.statement)} <span class='meta'><code>{_e(u.signal)} @ {_e(u.instance)}"
                f"</code> · {_e(u.layer)} · score {u.score:.2g}</span>"
                for u in d.unexplained
            ],
        )
    )
    body.append(_list_section("next", "Next actions", [_e(a) for a in d.next_actions], True))
    body.append(
        _list_section(
            "missing",
            "Missing signals",
            [f"<code>{_e(k)}</code>: {_e(r)}" for k, r in d.missing_signals.items()],
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
