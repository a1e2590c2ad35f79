"""Advice on replicas that carry a lost peer's share says so (seed §2.3).

A replica down, out of rotation or restarting sends its share of the work to its peers. A
remedy that restarts, drains or resizes those peers meanwhile takes more capacity out of a
fleet already short of it, and whatever they show (memory climbing, queues growing) may be
that share, not a fault of their own. So a confirmed cause or forecast on the peers of
replicas a rule marked `takes_out` holds out keeps its remedy, led by what they carry.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from infersight.diagnose.kb import KnowledgeBase
from infersight.diagnose.result import HypothesisResult
from infersight.units import format_clock


def _names(instances: tuple[str, ...], most: int = 4) -> str:
    more = f" and {len(instances) - most} more" if len(instances) > most else ""
    return ", ".join(instances[:most]) + more


def with_cautions(
    results: dict[str, HypothesisResult],
    kb: KnowledgeBase,
    role: Callable[[str], str],
) -> None:
    """Each confirmed hypothesis on the peers of replicas taken out gets a remedy that says
    so first (in place)."""
    out = [
        h
        for h in results.values()
        if h.verdict == "confirmed" and (r := kb.get(h.id)) is not None and r.takes_out
    ]
    for rid, h in list(results.items()):
        rule = kb.get(rid)
        if rule is None or rule.kind == "symptom" or rule.takes_out:
            continue
        if h.verdict != "confirmed" or not h.instances:
            continue
        note = _caution(h, out, role)
        if note:
            remedy = f"{note} {h.remedy}".strip()
            results[rid] = dataclasses.replace(h, remedy=remedy)


def _caution(h: HypothesisResult, out: list[HypothesisResult], role: Callable[[str], str]) -> str:
    mine = set(h.instances)
    for o in out:
        gone = tuple(i for i in o.instances if i not in mine)
        peers = {role(i) for i in gone}
        if not gone or set(o.instances) & mine or not any(role(i) in peers for i in mine):
            continue
        since = f" since {format_clock(o.onset)} UTC" if o.onset is not None else ""
        verb = "carries" if len(h.instances) == 1 else "carry"
        return (
            f"{_names(h.instances)} {verb} the share of {_names(gone)}, out{since} "
            f"({o.id}): bring those back first; restarting, draining or resizing these "
            "meanwhile takes more capacity out."
        )
    return ""
