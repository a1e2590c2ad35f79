"""What a report says of the cluster: what changed in the window (each change with its time,
relative to the onset, and its figures), which pods ran on a finding's nodes, and the changes
at a root's nodes around its onset, quoted under it. Nothing is said off Kubernetes: the lack
of kube-state-metrics is not "nothing changed"."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from infersight.diagnose.result import Diagnosis, HypothesisResult
from infersight.kube.changes import ClusterChange, relative
from infersight.report.consequences import earliest_onset
from infersight.units import format_clock

#: a change this long before a root's onset, or this long after, is quoted under it: a
#: rollout's new pods take minutes to load a model, and the issue is felt after they serve
BEFORE_ROOT_S, AFTER_ROOT_S = 3600.0, 600.0
#: lines under one root, and pod names per workload: the report's section has them all
MAX_AT_ROOT, MAX_PODS = 3, 2


@dataclass(frozen=True)
class ChangeLine:
    when: str  # `14:38 (3 min before the onset)`, `before the window`
    subject: str
    what: str
    lasted: str  # `until 14:44`, `to the window's end`, "" for a moment's change
    at_root: bool  # quoted under a root: on its nodes, around its onset


def onset_of(d: Diagnosis) -> float | None:
    """The first root's onset, else the earliest of the confirmed findings'."""
    for r in sorted(d.root_causes, key=lambda r: r.rank):
        h = d.hypothesis(r.hypothesis)
        if h is not None and (t := earliest_onset(h)) is not None:
            return t
    times = [t for h in d.by_verdict("confirmed") if (t := earliest_onset(h)) is not None]
    return min(times) if times else None


def _when(c: ClusterChange, onset: float | None) -> str:
    if c.before_window:
        return "before the window"
    rel = relative(c.at, onset)
    return f"at {format_clock(c.at)}" + (f", {rel}" if rel else "")


def _lasted(c: ClusterChange) -> str:
    if not c.lasting:
        return ""
    return f"until {format_clock(c.until)}" if c.until is not None else "to the window's end"


def near(c: ClusterChange, h: HypothesisResult) -> bool:
    """A change at the hypothesis' instances (or the whole fleet's) around its onset."""
    onset = earliest_onset(h)
    if onset is None:
        return False
    if c.nodes and h.instances and not set(c.nodes) & set(h.instances):
        return False
    ends = c.until if c.until is not None else float("inf")
    return c.at - AFTER_ROOT_S <= onset and ends >= onset - BEFORE_ROOT_S


def change_lines(d: Diagnosis) -> tuple[ChangeLine, ...]:
    onset = onset_of(d)
    roots = [h for r in d.root_causes if (h := d.hypothesis(r.hypothesis)) is not None]
    return tuple(
        ChangeLine(_when(c, onset), c.subject, c.what, _lasted(c), any(near(c, h) for h in roots))
        for c in d.cluster_changes
    )


def _order(cs: list[ClusterChange], h: HypothesisResult) -> tuple[bool, bool, float]:
    """On the root's own nodes first; then what began in the window, nearest its onset."""
    mine = any(set(c.nodes) & set(h.instances) for c in cs)
    onset = earliest_onset(h) or 0.0
    return (not mine, cs[0].before_window, min(abs(c.at - onset) for c in cs))


def at_root(d: Diagnosis, h: HypothesisResult | None) -> tuple[str, ...]:
    """The changes quoted under a root, one line per kind of change of one workload: the pods of
    a rollout that were not Ready are one line, with how many and from when."""
    if h is None:
        return ()
    onset = earliest_onset(h)
    groups: dict[tuple[str, str, str, bool], list[ClusterChange]] = {}
    for c in d.cluster_changes:
        if near(c, h):
            what = c.what if c.kind != "restart" else ""
            key = (c.kind, c.workload or c.subject, what, c.before_window)
            groups.setdefault(key, []).append(c)
    out = []
    # what happened on the root's own nodes first, then the fleet's; what began in the window
    # before what was already so
    for (_, owner, _, _), cs in sorted(groups.items(), key=lambda g: _order(g[1], h)):
        first = min(cs, key=lambda c: c.at)
        when = _when(first, onset)
        if len(cs) == 1:
            out.append(f"{first.subject}: {first.what}, {when}")
        elif len({c.subject for c in cs}) == 1:  # one object, the same change again
            out.append(f"{first.subject}: {first.what} ({len(cs)} times), {when}")
        else:
            kind = first.subject.split(" ", 1)[0]
            since = when.removeprefix("at ")
            out.append(f"{len(cs)} {kind}s of {owner}: {first.what}, from {since}")
    return tuple(out[:MAX_AT_ROOT]) + (
        (f"and {len(out) - MAX_AT_ROOT} more changes (the report's cluster section)",)
        if len(out) > MAX_AT_ROOT
        else ()
    )


def pods_on(d: Diagnosis, instances: Iterable[str]) -> str:
    """`Deployment/vllm on node-0, node-1 (4 pods: vllm-…-x2k9q, … +2)`: the workloads whose
    pods ran on these nodes in the window (exporters' DaemonSets left out); "" for none."""
    nodes = set(instances)
    by_owner: dict[str, tuple[set[str], list[str]]] = {}
    for name, p in sorted(d.pods.items()):
        owner = str(p.get("workload", "")) or f"pod {name}"
        if p.get("node") in nodes and not owner.startswith("DaemonSet/"):
            where, names = by_owner.setdefault(owner, (set(), []))
            where.add(str(p.get("node")))
            names.append(name)
    parts = []
    for owner, (where, names) in by_owner.items():
        more = len(names) - MAX_PODS
        shown = ", ".join(names[:MAX_PODS]) + (f" +{more}" if more > 0 else "")
        at = ", ".join(sorted(where))
        parts.append(f"{owner} on {at} ({len(names)} pod(s): {shown})")
    return "; ".join(parts)


def scope_pods(d: Diagnosis, anomalous: Iterable[str]) -> str:
    """The scope in the cluster's words (seed §2.3: one instance or all of them?): for each
    workload with pods on the anomalous nodes, on how many of its nodes, e.g.
    `Deployment/vllm on 4 of its 6 nodes (5 pods)`; "" off Kubernetes."""
    bad = set(anomalous)
    nodes: dict[str, set[str]] = {}
    pods: dict[str, int] = {}
    for p in d.pods.values():
        owner = str(p.get("workload", ""))
        if not owner or owner.startswith("DaemonSet/"):
            continue
        nodes.setdefault(owner, set()).add(str(p.get("node")))
        pods[owner] = pods.get(owner, 0) + (p.get("node") in bad)
    parts = [
        f"{owner} on {len(where & bad)} of its {len(where)} node(s) ({pods[owner]} pod(s))"
        for owner, where in sorted(nodes.items())
        if where & bad
    ]
    return "; ".join(parts)
