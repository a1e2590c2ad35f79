"""The report in a terminal (rich): what broke, why, and the figures that say so.

By default one screen (`firstscreen`): the headline, two lines per root cause, the chain, the
causes ruled out as ids and a footer naming the coverage gaps. `full=True` adds everything
else: scope, coverage per layer, the evidence step by step, why each cause was ruled out.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console, Group, RenderableType
from rich.panel import Panel
from rich.table import Table
from rich.text import Text
from rich.tree import Tree

from infersight.diagnose.result import Diagnosis, Evidence, HypothesisResult, UnexplainedChange
from infersight.report.figures import format_score
from infersight.report.firstscreen import FirstScreen, RootLine, first_screen
from infersight.report.seen_before import PastIncident
from infersight.report.seen_before import lines as seen_lines
from infersight.report.textsafe import clean_data
from infersight.report.view import (
    ReportView,
    RootView,
    actions_and_missing,
    build_view,
    evidence_where,
    figures,
    not_ruled_out,
    reading_mark,
    refuting,
    said,
)
from infersight.units import format_clock, format_confidence

#: how to get the rest, said once at the foot of the short report
MORE = "-v/--full: the evidence step by step, scope, coverage, and why each cause was ruled out"


def _heading(text: str) -> Text:
    return Text(f"\n{text}", style="bold underline")


def _evidence_line(e: Evidence) -> Text:
    """The reading marked by what it says (▲ up, ▼ down, = level); the condition it decides
    marked at the end: ✔ for the cause, ✘ against it."""
    line = Text(f"{reading_mark(e)} ", style="bold")
    line.append(e.statement)
    fig = figures(e)
    if fig and not said(e.statement, fig):
        line.append(f"  [{fig}]", style="bold")
    if not said(e.statement, e.signal, e.instance):
        line.append(f"  {evidence_where(e)}", style="dim")
    line.append(*(("  ✔ for", "green") if e.supports else ("  ✘ rules it out", "red")))
    return line


def _scope(v: ReportView) -> RenderableType:
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold")
    table.add_column()
    table.add_column(style="dim")
    for item in v.scope:
        table.add_row(Text(item.label), Text(item.value), Text(item.why))
    if not v.scope:
        table.add_row("Scope", "not determined", "")
    parts: list[RenderableType] = [table]
    if v.scope_signals:
        sig = Table(box=None, padding=(0, 2), show_edge=False)
        for col in ("user-facing signal", "anomalous", "observed"):
            sig.add_column(col, style="dim" if col != "observed" else "")
        for row in v.scope_signals:
            sig.add_row(*(Text(c) for c in row))
        parts.append(sig)
    return Group(*parts)


def _cluster(v: ReportView) -> RenderableType:
    table = Table(box=None, show_header=True, header_style="bold", pad_edge=False)
    table.add_column("When", no_wrap=True)
    table.add_column("Change")
    table.add_column("Lasted", no_wrap=True)
    for c in v.cluster:
        style = "yellow" if c.at_root else ""
        table.add_row(c.when, f"{c.subject}: {c.what}", c.lasted, style=style)
    return table


def _coverage(v: ReportView) -> RenderableType:
    table = Table(box=None, padding=(0, 2), show_edge=False)
    for col in ("layer", "signals with readings", "instances"):
        table.add_column(col, style="dim" if col == "instances" else "")
    for layer, count, insts in v.coverage:
        table.add_row(Text(layer), Text(count), Text(insts))
    return table


def _root(
    r: RootView, also: tuple[UnexplainedChange, ...] = (), screen: RootLine | None = None
) -> RenderableType:
    h = r.hypothesis
    head = Text(f"#{r.rank}  ", style="bold")
    head.append(r.title, style="bold red")
    head.append(f"  confidence {r.confidence}", style="bold")
    if h is not None:
        head.append(f"  [{h.layer}]", style="cyan")
        if h.onset is not None:
            head.append(f"  onset {format_clock(h.onset, seconds=True)} UTC")
        if h.instances:
            head.append(f"  on {', '.join(h.instances)}", style="dim")
    head.append("\nchain: ", style="yellow")
    head.append(r.chain_text)
    tree = Tree(head)
    seen: list[str] = []
    for i, step in enumerate(r.steps):
        if not step.first:
            seen.append(step.title)
            continue
        label = Text("root: " if i == 0 else f"{i}. ", style="yellow")
        label.append(step.title, style="bold")
        label.append(f"  ({step.layer or 'unknown layer'})", style="cyan")
        node = tree.add(label)
        if step.hypothesis is not None:
            for e in step.hypothesis.evidence:
                node.add(_evidence_line(e))
    if seen:
        tree.add(Text(f"then {' → '.join(seen)} (evidence above)", style="dim"))
    for u in also:
        line = Text("also seen: ", style="yellow")
        line.append(u.statement)
        tree.add(line)
    lines: list[RenderableType] = [tree]
    if screen is not None and screen.path:
        lines.append(Text.assemble(("Path: ", "bold"), screen.path))
    if screen is not None and screen.pods:
        lines.append(Text.assemble(("Pods: ", "bold"), screen.pods))
    for c in screen.cluster if screen is not None else ():
        lines.append(Text.assemble(("Changed there: ", "bold yellow"), c))
    open_check = not_ruled_out(h) if h is not None else None
    if open_check:
        lines.append(Text.assemble(("Not ruled out: ", "bold yellow"), open_check))
    if h is not None and h.remedy:
        remedy = screen.remedy if screen is not None else h.remedy
        lines.append(Text.assemble(("Remedy: ", "bold green"), remedy))
    if h is not None and h.runbook:
        book = screen.runbook_line if screen is not None else h.runbook
        lines.append(Text.assemble(("Runbook: ", "bold green"), book))
    return Group(*lines)


def _hypotheses(
    title: str, hyps: tuple[HypothesisResult, ...], refuted: bool = False
) -> list[RenderableType]:
    if not hyps:
        return []
    out: list[RenderableType] = [_heading(title)]
    for h in hyps:
        label = Text.assemble((h.title, "bold"), (f"  [{h.layer}]", "cyan"), (f"  {h.id}", "dim"))
        if h.verdict == "confirmed":
            label.append(f"  confidence {format_confidence(h.confidence)}")
        tree = Tree(label)
        if h.verdict == "inconclusive":
            missing = ", ".join(h.missing_signals) or "not stated"
            tree.add(Text.assemble(("missing: ", "yellow"), missing))
        open_check = not_ruled_out(h)
        if open_check:
            tree.add(Text.assemble(("not ruled out: ", "yellow"), open_check))
        for e in refuting(h) if refuted else h.evidence:
            tree.add(_evidence_line(e))
        out.append(tree)
    return out


def _style(d: Diagnosis) -> str:
    return "yellow" if not d.judged else "green" if d.healthy else "red"


def short_renderables(d: Diagnosis) -> list[RenderableType]:
    """The one-screen report: headline, two lines per root, chain, ruled out, coverage gaps."""
    d = clean_data(d)
    s: FirstScreen = first_screen(d)
    out: list[RenderableType] = [Text(s.headline, style=f"bold {_style(d)}")]
    if s.coverage_note:
        out.append(Text(s.coverage_note, style="yellow"))
    if s.summary:
        out.append(Text(s.summary))
    if s.symptom:
        out.append(Text(f"Symptom: {s.symptom}"))
    out.append(Text(f"Window: {s.window}", style="dim"))
    grid = Table.grid(padding=(0, 1))
    grid.add_column(no_wrap=True, style="bold")
    grid.add_column()
    for r in s.roots:
        what = Text(r.what, style="bold red")
        what.append(": " + "; ".join(r.figures) if r.figures else "", style="")
        grid.add_row(f"#{r.rank}", what)
        if r.path:
            grid.add_row("", Text.assemble(("path: ", "bold"), r.path))
        if r.pods:
            grid.add_row("", Text.assemble(("pods: ", "bold"), r.pods))
        for c in r.cluster:
            grid.add_row("", Text.assemble(("changed there: ", "bold yellow"), c))
        grid.add_row("", Text.assemble(("do: ", "bold green"), r.do))
        if r.open_check:
            grid.add_row("", Text.assemble(("not ruled out: ", "yellow"), r.open_check))
        if r.also_seen:
            also = "; ".join(a.text for a in r.also_seen)
            grid.add_row("", Text.assemble(("also seen: ", "yellow"), also))
    if grid.row_count:
        out += [Text(""), grid]
    tail: list[RenderableType] = [Text.assemble(("chain: ", "bold"), c) for c in s.chains]
    if s.ruled_out:
        tail.append(
            Text.assemble(
                (f"ruled out ({len(s.ruled_out)}): ", "bold"), (", ".join(s.ruled_out), "dim")
            )
        )
    tail += [Text.assemble(("confirmed: ", "bold red"), c) for c in s.confirmed]
    tail += [Text.assemble(("changed: ", "bold yellow"), c) for c in s.changes]
    if s.unexplained > len(s.changes):
        tail.append(
            Text.assemble(
                ("unexplained: ", "bold"),
                f"{s.unexplained} changes no known cause explains"
                + (f", {len(s.changes)} above" if s.changes else ""),
            )
        )
    if tail:
        out += [Text(""), *tail]
    if s.footer:
        out += [Text(""), Text(s.footer, style="yellow")]
    out.append(Text(MORE, style="dim"))
    return out


def renderables(d: Diagnosis) -> list[RenderableType]:
    """The full report as rich renderables, in order (for embedding in other output). Every
    string from the data is shown with its control characters made visible, never read as
    markup."""
    d = clean_data(d)
    v = build_view(d)
    style = _style(d)
    head = Text(v.headline, style=f"bold {style}")
    if v.coverage_note:
        head.append(f"\n{v.coverage_note}", style="yellow")
    if d.summary and d.summary != v.headline and not v.roots:
        head.append(f"\n{d.summary}", style="")
    head.append(f"\nWindow: {v.window}", style="dim")
    out: list[RenderableType] = [Panel(head, title="infersight diagnosis", border_style=style)]
    out += [_heading("Scope"), _scope(v)]
    if v.cluster:
        out += [_heading("What changed in the cluster"), _cluster(v)]
    if v.coverage:
        out += [_heading("Coverage per layer"), _coverage(v)]
    if v.roots:
        out.append(_heading("Root causes, chain and evidence"))
        lines = {r.rank: r for r in first_screen(d).roots}
        for r in v.roots:
            out += [_root(r, v.also_seen.get(r.id, ()), lines.get(r.rank)), Text("")]
    if v.unchecked:
        out.append(_heading("Possible upstream causes that could not be checked"))
        out += [Text.assemble(("• ", "yellow"), line) for line in v.unchecked]
    out += _hypotheses("Also confirmed", v.also_confirmed)
    ruled = "Checked and ruled out" if d.healthy else "Ruled out"
    out += _hypotheses(ruled, v.refuted, refuted=True)
    out += _hypotheses("Could not be checked (data missing)", v.inconclusive)
    if v.unexplained:
        out.append(_heading("Unexplained changes"))
        for u in v.unexplained:
            line = Text(f"• {u.statement}")
            line.append(
                f"  {u.signal} @ {u.instance} [{u.layer}] score {format_score(u.score)}",
                style="dim",
            )
            out.append(line)
    actions, missing = actions_and_missing(d)
    if actions:
        out.append(_heading("Next actions"))
        out += [Text(f"{i}. {a}") for i, a in enumerate(actions, 1)]
    if missing:
        out.append(_heading("Missing signals"))
        out += [Text.assemble((f"• {k}: ", "yellow"), r) for k, r in missing]
    if d.source:
        src = ", ".join(f"{k}={val}" for k, val in d.source.items())
        out.append(Text(f"\nSource: {src}", style="dim"))
    return out


def render_terminal(
    diagnosis: Diagnosis,
    console: Console | None = None,
    full: bool = False,
    seen: Sequence[PastIncident] | None = None,
) -> None:
    """Print the report: one screen, or everything with `full`; then the past incidents like
    it when a postmortem library was searched. User text is never read as rich markup."""
    from infersight.runbooks.choose import for_diagnosis

    con = console or Console()
    diagnosis = for_diagnosis(diagnosis)  # each runbook the one for the stack found
    for r in renderables(diagnosis) if full else short_renderables(diagnosis):
        con.print(r)
    for line in seen_lines(seen):
        con.print(Text(line, style="cyan"))
