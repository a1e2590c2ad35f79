"""The answer on one screen: what every short report says, in the order an on-call reads it.

1. the headline; 2. per root cause one line with what, where, since when and the figures, one
with what it did on the request path and where its work piled up (the trigger and the
bottleneck, where the walk found one), and one with what to do, there too (and what else it
brought, "also seen"); 3. the chain; 4. the causes ruled
out, as one line of ids; 5. one footer naming what could not be read. The terminal's default,
Markdown and `--brief` (Slack) are laid out from this; everything else is in the full report.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from infersight.diagnose.result import (
    Diagnosis,
    Evidence,
    HypothesisResult,
    RootCause,
    UnexplainedChange,
)
from infersight.report.cluster import at_root, pods_on
from infersight.report.consequences import attribute, earliest_onset
from infersight.report.pathwords import path_line, piled_up
from infersight.report.seen_before import PastIncident
from infersight.report.symptom import felt
from infersight.report.view import ReportView, build_view, figures, not_ruled_out, signal_unit
from infersight.units import format_change, format_clock, format_ratio

#: instances named before "and N more"
NAMED_INSTANCES = 2
#: with no root cause, the unexplained changes named on the first screen
NAMED_CHANGES = 5
#: missing signals named in the footer before "+N more"
NAMED_MISSING = 6


@dataclass(frozen=True)
class AlsoSeen:
    """One kind of change seen with a root: a signal, where, its figures, since when."""

    signal: str
    where: str
    change: str
    since: float | None

    @property
    def text(self) -> str:
        since = f" since {format_clock(self.since)}" if self.since is not None else ""
        change = f" {self.change}" if self.change else ""
        return f"{self.signal}{change} on {self.where}{since}"


@dataclass(frozen=True)
class RootLine:
    rank: int
    id: str
    title: str
    confidence: str
    layer: str
    where: str
    since: float | None
    figures: tuple[str, ...]
    todo: str
    runbook: str | None
    open_check: str | None
    also_seen: tuple[AlsoSeen, ...]
    #: what it did on the request path and where the work piled up ("" where the walk found
    #: no bottleneck and it is no limit beside a trigger)
    path: str = ""
    #: where its work piled up, in words, when that is not the root itself
    piled_up: str = ""
    #: the stack the runbook was chosen for and why, or why none could be ("" when it runs
    #: anywhere)
    runbook_note: str = ""
    #: on Kubernetes: the pods that ran on its nodes, and what changed there around its onset
    pods: str = ""
    cluster: tuple[str, ...] = ()

    @property
    def what(self) -> str:
        """ "The vector DB … · 92% · vectordb-0 · since 02:19 UTC" """
        parts = [self.title, self.confidence]
        if self.where:
            parts.append(self.where)
        if self.since is not None:
            parts.append(f"since {format_clock(self.since)} UTC")
        return " · ".join(parts)

    @property
    def remedy(self) -> str:
        """The root's remedy, then where its work piled up: the fix covers both."""
        text = self.todo or "No remedy recorded for this cause."
        if self.piled_up:
            text = f"{text.rstrip().rstrip('.')}; and where it piled up: {self.piled_up}."
        return text

    @property
    def runbook_line(self) -> str:
        """ "lb-restore-endpoints-ingress-nginx, for kubernetes + ingress-nginx (…)" """
        if not self.runbook:
            return ""
        return self.runbook + (f", {self.runbook_note}" if self.runbook_note else "")

    @property
    def do(self) -> str:
        runbook = f" (runbook: {self.runbook_line})" if self.runbook else ""
        return self.remedy + runbook


@dataclass(frozen=True)
class FirstScreen:
    headline: str
    #: next to the verdict: how much could not be read ("" when everything could)
    coverage_note: str
    healthy: bool
    judged: bool
    symptom: str
    window: str
    roots: tuple[RootLine, ...]
    chains: tuple[str, ...]
    ruled_out: tuple[str, ...]
    footer: str
    #: with no root cause: what was confirmed all the same (symptoms), one line each
    confirmed: tuple[str, ...]
    #: with no root cause: the engine's own summary (what it could not check, and why)
    summary: str
    #: with no root cause: the strongest changes no known cause explains (the answer there is)
    changes: tuple[str, ...]
    #: the footer for a chat message: counts, no names
    short_footer: str
    unexplained: int


def where(instances: tuple[str, ...]) -> str:
    """ "vectordb-0", "node-0, node-1", "8 instances (node-0, node-1 …)" """
    if len(instances) <= NAMED_INSTANCES:
        return ", ".join(instances)
    return f"{len(instances)} instances ({', '.join(instances[:NAMED_INSTANCES])} …)"


def figure(e: Evidence) -> str:
    """ "dependency.vector_query_p99 28.3 ms → 13.4 s (473×)" """
    fig = figures(e)
    ratio = ""
    if e.kind == "deviation" and e.baseline and e.observed is not None and e.baseline > 0:
        ratio = format_ratio(e.observed / e.baseline)
    text = f"{e.signal} {fig}" if fig else e.signal
    return f"{text} ({ratio})" if ratio else text


def _lead(h: HypothesisResult | None) -> str:
    """The root's first figure, since the root began (as its own line dates it, so that a
    trigger is never read as later than what it loaded): "requests 10/s → 25/s (2.5×) since
    14:40"."""
    e = next((e for e in h.evidence if e.supports), None) if h is not None else None
    if h is None or e is None:
        return ""
    start = earliest_onset(h)
    return figure(e) + (f" since {format_clock(start)}" if start is not None else "")


def _figures(h: HypothesisResult) -> tuple[str, ...]:
    out: dict[str, str] = {}
    for e in h.evidence:
        if e.supports and e.signal not in out:
            out[e.signal] = figure(e)
    return tuple(out.values())


def also_seen_lines(changes: tuple[UnexplainedChange, ...]) -> tuple[AlsoSeen, ...]:
    """The changes seen with a root, one line per signal (its instances named together)."""
    by_signal: dict[str, list[UnexplainedChange]] = {}
    for u in changes:
        by_signal.setdefault(u.signal, []).append(u)
    out = []
    for signal, items in by_signal.items():
        first = items[0]
        unit = signal_unit(signal)
        since = min((u.onset for u in items if u.onset is not None), default=None)
        change = format_change(first.baseline, first.observed, unit)
        insts = tuple(dict.fromkeys(u.instance for u in items))
        out.append(AlsoSeen(signal, where(insts), change, since))
    return tuple(out)


def _step_label(d: Diagnosis, hid: str) -> str:
    h = d.hypothesis(hid)
    if h is None:
        return hid
    start = earliest_onset(h)
    return f"{h.title} ({format_clock(start)})" if start is not None else h.title


def _chains(v: ReportView) -> tuple[str, ...]:
    """Roots that lead into the same steps share one line: "#1, #2 → A (02:28) → B (02:28)"."""
    tails: dict[tuple[str, ...], list[int]] = {}
    for r in v.roots:
        tails.setdefault(tuple(s.id for s in r.steps[1:]), []).append(r.rank)
    out = []
    for tail, ranks in tails.items():
        head = ", ".join(f"#{n}" for n in ranks)
        steps = [_step_label(v.diagnosis, hid) for hid in tail]
        out.append(" → ".join([head, *steps]) if steps else f"{head}: no further step confirmed")
    return tuple(out)


def _symptom(d: Diagnosis, v: ReportView) -> str:
    """ "access.request_latency_p99 989 ms → 2.44 s (2.47×) on ingress-0 since 01:06 UTC; part
    of the requests, continuous" (`symptom.felt`: the user-facing signal that moved most, a
    gateway's first; then the parts of the scope that are known)."""
    scope = [
        i.value if i.label == "Pods" else i.value.lower()  # workloads keep their names' case
        for i in v.scope
        if i.label != "Anomalous instances" and i.value.lower() != "unknown"
    ]
    tail = ", ".join(scope)
    f = felt(d)
    if f is None:
        return tail[:1].upper() + tail[1:]
    return f.line() + (f"; {tail}" if tail else "")


def _footer(d: Diagnosis, v: ReportView, detail: bool = True) -> str:
    parts: list[str] = []
    unchecked = [h.id for h in v.inconclusive]
    if unchecked:
        named = f" ({', '.join(unchecked)})" if detail else ""
        parts.append(f"{len(unchecked)} causes not checked{named}")
    missing = list(d.missing_signals)
    if missing and detail:
        named = ", ".join(missing[:NAMED_MISSING])
        more = f" +{len(missing) - NAMED_MISSING} more" if len(missing) > NAMED_MISSING else ""
        parts.append(f"missing {named}{more}")
    if not parts:
        return "Coverage: every signal was read."
    return "Coverage gaps: " + "; ".join(parts) + "."


def _confirmed_line(h: HypothesisResult) -> str:
    """ "Requests pile up in the serving queue · n2 · since 22:51 UTC: service.queue_length …" """
    start = earliest_onset(h)
    parts = [h.title, where(h.instances)] if h.instances else [h.title]
    if start is not None:
        parts.append(f"since {format_clock(start)} UTC")
    figs = "; ".join(_figures(h))
    return " · ".join(parts) + (f": {figs}" if figs else "")


def first_screen(d: Diagnosis) -> FirstScreen:
    from infersight.runbooks.choose import for_diagnosis, note_for

    d = for_diagnosis(d)  # each runbook the one for the stack the exporters reveal
    v = build_view(d)
    seen = attribute(v.diagnosis).also_seen
    causes: dict[str, RootCause] = {rc.hypothesis: rc for rc in d.root_causes}
    roots = []
    for r in v.roots:
        h = r.hypothesis
        rc = causes.get(r.id)
        roots.append(
            RootLine(
                rank=r.rank,
                id=r.id,
                title=r.title,
                confidence=r.confidence,
                layer=h.layer if h is not None else "",
                where=where(h.instances) if h is not None else "",
                since=earliest_onset(h) if h is not None else None,
                figures=_figures(h) if h is not None else (),
                todo=h.remedy if h is not None else "",
                runbook=h.runbook if h is not None else None,
                runbook_note=note_for(d, h.runbook) if h is not None and h.runbook else "",
                open_check=not_ruled_out(h) if h is not None else None,
                also_seen=also_seen_lines(seen.get(r.id, ())),
                path=path_line(rc, _lead(h), causes) if rc is not None else "",
                piled_up=piled_up(rc) if rc is not None else "",
                pods=pods_on(d, h.instances) if h is not None else "",
                cluster=at_root(d, h),
            )
        )
    return FirstScreen(
        headline=v.headline,
        coverage_note=v.coverage_note,
        healthy=d.healthy,
        judged=d.judged,
        symptom=_symptom(v.diagnosis, v) if d.judged and not d.healthy else "",
        window=v.window,
        roots=tuple(roots),
        chains=_chains(v),
        ruled_out=tuple(h.id for h in v.refuted),
        footer=_footer(d, v) if d.judged else "",
        confirmed=tuple(_confirmed_line(h) for h in v.also_confirmed) if not roots else (),
        summary=d.summary if not roots and d.judged and not d.healthy else "",
        changes=tuple(u.statement for u in v.unexplained[:NAMED_CHANGES]) if not roots else (),
        short_footer=_footer(d, v, detail=False) if d.judged else "",
        unexplained=len(v.unexplained),
    )


def render_brief(d: Diagnosis, seen: Sequence[PastIncident] | None = None) -> str:
    """A few lines for a Slack thread or a pager note: the same order, nothing else; the past
    incidents like it when a postmortem library was searched."""
    from infersight.report.seen_before import lines as seen_lines
    from infersight.report.textsafe import clean

    s = first_screen(d)
    out = [f"*{s.headline}*"]
    if s.coverage_note:
        out.append(s.coverage_note)
    if s.symptom:
        out.append(f"Symptom: {s.symptom}")
    out.append(f"Window: {s.window}")
    for r in s.roots:
        out.append(f"{r.rank}. {r.what}: {'; '.join(r.figures)}")
        if r.path:
            out.append(f"   Path: {r.path}")
        out.append(f"   Do: {r.do}")
    out += [f"Chain: {c}" for c in s.chains]
    out += [f"Confirmed: {c}" for c in s.confirmed]
    out += [f"Changed: {c}" for c in s.changes]
    if s.ruled_out:
        out.append(f"Ruled out: {len(s.ruled_out)} causes")
    out += [line[0].upper() + line[1:] for line in seen_lines(seen)]
    if s.short_footer:
        out.append(s.short_footer)
    return "\n".join(clean(line, one_line=True) for line in out) + "\n"
