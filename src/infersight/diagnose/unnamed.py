"""A root no rule names: "a change at NODE", with what changed there and how to tell why.

The walk ended at a part of the path, and no confirmed rule's mechanism sits there. The answer
is that part, never nothing and never a rule about something downstream: its changes, the ends
first, then the earliest and largest (signal, before → after, since when, where), and the
measurements that would tell apart the mechanisms known at that part (the rules whose `at`
holds it: what each lacked, or what ruled it out).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from infersight.diagnose.kb import KnowledgeBase
from infersight.diagnose.path import Change, Walk, key
from infersight.diagnose.path.config import PathConfig
from infersight.diagnose.result import Evidence, HypothesisResult
from infersight.diagnose.root_site import LAYER_OF, PathRoot
from infersight.signals import all_signals

#: seed §5.2: the path read layer by layer, and §2.3's order
SEED = "5.2"


def _words(w: Walk, root: PathRoot) -> str:
    nodes = [w.reader.world.nodes[n] for n in root.site.nodes]
    if len(nodes) == 1:
        return nodes[0].describe()
    part = nodes[0].part
    names = ", ".join(n.instance for n in nodes[:4])
    more = f" and {len(nodes) - 4} more" if len(nodes) > 4 else ""
    return f"the {part} of {names}{more}"


def _first(c: Change) -> tuple[float, int, float]:
    """Ends in the order they began; of those that began together, what says most plainly
    what happened first: a part that stopped answering, then the work it took."""
    sig = all_signals().get(c.signal)
    plain = 0 if sig is not None and sig.answers else 1 if c.facet == "arrivals" else 2
    return (c.onset, plain, -c.score)


def evidence(w: Walk, root: PathRoot, cfg: PathConfig) -> tuple[Evidence, ...]:
    """One line per signal: the site's ends first (what nothing explains), then its nodes'
    other changes that got worse, earliest and largest first; each on its strongest
    instance, naming how many of the site's instances moved the same way."""
    ends = {key(c) for c in root.site.ends}
    rest = [
        c
        for n in root.site.nodes
        for c in w.reader.at_node.get(n, [])
        if key(c) not in ends and c.bad
    ]
    ordered = sorted(root.site.ends, key=_first) + sorted(rest, key=lambda c: (c.onset, -c.score))
    by_signal: dict[str, list[Change]] = {}
    for c in ordered:
        by_signal.setdefault(c.signal, []).append(c)
    total = len(root.site.instances)
    out: list[Evidence] = []
    for cs in by_signal.values():
        best = max(cs, key=lambda c: c.score)
        e = dataclasses.replace(best.evidence, supports=True, onset=min(c.onset for c in cs))
        moved = len({c.instance for c in cs})
        if total > 1 and moved > 1:
            e = dataclasses.replace(e, statement=f"{e.statement} (on {moved} of {total})")
        out.append(e)
        if len(out) == cfg.unnamed_max_signals:
            break
    return tuple(out)


def _candidates(kb: KnowledgeBase, results: Mapping[str, HypothesisResult], part: str) -> list[str]:
    """What would tell the mechanisms known at this part apart."""
    out = []
    for rule in kb.rules:
        if rule.kind != "cause" or part not in rule.at:
            continue
        h = results.get(rule.id)
        if h is None:
            continue
        if h.verdict == "inconclusive" and h.missing_signals:
            how = "; ".join(rule.checks[s] for s in h.missing_signals if s in rule.checks)
            out.append(
                f"{rule.id} needs {', '.join(h.missing_signals)}" + (f" ({how})" if how else "")
            )
        elif h.verdict == "refuted":
            against = next((e.statement for e in h.evidence if not e.supports), "")
            out.append(f"{rule.id} was ruled out" + (f": {against}" if against else ""))
    return out


def hypothesis(
    w: Walk,
    root: PathRoot,
    kb: KnowledgeBase,
    results: Mapping[str, HypothesisResult],
    cfg: PathConfig,
    confidence: float,
) -> HypothesisResult:
    ev = evidence(w, root, cfg)
    where = _words(w, root)
    top = ev[0].statement.split(";")[0] if ev else ""
    known = _candidates(kb, results, root.site.part)
    remedy = (
        f"Look at {where} first: it changed before anything it explains, and no known failure "
        "mode accounts for it. "
        + (
            "To tell the known mechanisms there apart: " + "; ".join(known[:4]) + "."
            if known
            else "No rule knows this part's mechanisms: compare its changes with recent "
            "deploys, config changes and its own logs."
        )
    )
    return HypothesisResult(
        id=root.id,
        title=f"A change at {where} that no known failure mode names",
        layer=LAYER_OF.get(root.site.part, "service"),
        verdict="confirmed",
        confidence=confidence,
        seed=SEED,
        onset=root.site.onset,
        instances=root.site.instances,
        evidence=ev,
        remedy=remedy + (f" First change: {top}." if top else ""),
        is_root=True,
    )
