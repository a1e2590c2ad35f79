"""Linking confirmed hypotheses: who explains whom, which are roots, and each root's chain.

An edge a → b exists when rule a lists b in `explains`, both are confirmed and a did not begin
well after b (more than `LATE_S`): a cause does not start after its effect (seed §5 reads the
02:17 incident in the order things happened). A root is a
confirmed cause (not a symptom) that no other confirmed cause explains. A root's chain is the
longest path through confirmed hypotheses from it (ties: the one reaching a user-facing
symptom), so the 02:17 incident reads vector_db_swap → queue_backlog → vram_pressure →
gpu_util_low.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from infersight.diagnose.kb import Rule

#: Symptoms the user sees; a chain that ends in one of these is preferred.
USER_FACING = ("latency_high", "errors_high", "throughput_low")
#: A would-be cause whose onset is this much later than its effect's does not explain it.
LATE_S = 900.0


def edges(
    confirmed: Mapping[str, Rule], onsets: Mapping[str, float | None] | None = None
) -> dict[str, list[str]]:
    """a → b for every b that a's rule explains, unless a began more than LATE_S after b."""
    when = onsets or {}

    def in_time(a: str, b: str) -> bool:
        ta, tb = when.get(a), when.get(b)
        return ta is None or tb is None or ta - tb <= LATE_S

    return {
        rid: [t for t in rule.explains if t in confirmed and t != rid and in_time(rid, t)]
        for rid, rule in confirmed.items()
    }


def explained_by(graph: Mapping[str, Sequence[str]]) -> dict[str, list[str]]:
    back: dict[str, list[str]] = {k: [] for k in graph}
    for src, dsts in graph.items():
        for d in dsts:
            back.setdefault(d, []).append(src)
    return back


def roots(confirmed: Mapping[str, Rule], graph: Mapping[str, Sequence[str]]) -> list[str]:
    back = explained_by(graph)
    out = []
    for rid, rule in confirmed.items():
        if rule.kind != "cause":
            continue
        causes = [b for b in back.get(rid, []) if confirmed[b].kind == "cause" and b != rid]
        # a cycle of causes explaining each other leaves all of them roots
        if not causes or all(c in reach(graph, rid) for c in causes):
            out.append(rid)
    return out


def reach(graph: Mapping[str, Sequence[str]], start: str) -> set[str]:
    """Every hypothesis reachable from start through the links (start itself only on a
    cycle)."""
    seen: set[str] = set()
    stack = [start]
    while stack:
        n = stack.pop()
        for m in graph.get(n, ()):
            if m not in seen:
                seen.add(m)
                stack.append(m)
    return seen


def chain(graph: Mapping[str, Sequence[str]], root: str) -> tuple[str, ...]:
    """The longest simple path from root (depth-first; the graph is small)."""
    best: list[str] = [root]

    def score(path: list[str]) -> tuple[int, int]:
        return (len(path), int(path[-1] in USER_FACING))

    def dfs(path: list[str]) -> None:
        nonlocal best
        if score(path) > score(best):
            best = list(path)
        for nxt in graph.get(path[-1], ()):
            if nxt not in path and len(path) < 12:
                path.append(nxt)
                dfs(path)
                path.pop()

    dfs([root])
    return tuple(best)
