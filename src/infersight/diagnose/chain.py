"""Linking confirmed hypotheses: who explains whom, which are roots, and each root's chain.

An edge a → b exists when rule a lists b in `explains`, both are confirmed and a did not begin well
after b (more than `DiagnoseConfig.late_s`): a cause does not start after its effect (seed §5 reads
the 02:17 incident in the order things happened). A root is a confirmed cause (not a symptom) that
no other confirmed cause explains. A root's chain is the longest path through confirmed hypotheses
from it (ties: the one reaching a user-facing symptom), so the 02:17 incident reads vector_db_swap →
queue_backlog → vram_pressure → gpu_util_low.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from infersight.diagnose.config import DEFAULT_CONFIG, DiagnoseConfig
from infersight.diagnose.kb import Rule


def edges(
    confirmed: Mapping[str, Rule],
    onsets: Mapping[str, float | None] | None = None,
    config: DiagnoseConfig = DEFAULT_CONFIG,
) -> dict[str, list[str]]:
    """a → b for every b that a's rule explains, unless a began more than `late_s` after b."""
    when = onsets or {}
    late = config.late_s

    def in_time(a: str, b: str) -> bool:
        ta, tb = when.get(a), when.get(b)
        return ta is None or tb is None or ta - tb <= late

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


def chain(
    graph: Mapping[str, Sequence[str]], root: str, config: DiagnoseConfig = DEFAULT_CONFIG
) -> tuple[str, ...]:
    """The longest simple path from root (depth-first; the graph is small), up to
    `chain_max_len` links; of equal length, one that ends in a user-facing symptom."""
    best: list[str] = [root]
    facing, longest = config.user_facing_symptoms, config.chain_max_len

    def score(path: list[str]) -> tuple[int, int]:
        return (len(path), int(path[-1] in facing))

    def dfs(path: list[str]) -> None:
        nonlocal best
        if score(path) > score(best):
            best = list(path)
        for nxt in graph.get(path[-1], ()):
            if nxt not in path and len(path) < longest:
                path.append(nxt)
                dfs(path)
                path.pop()

    dfs([root])
    return tuple(best)
