"""What a confirmed root brought with it, and when it began.

A root's onset is its earliest evidence: a vector DB paging since 02:19 began at 02:19, even when
its query latency crossed the line at 02:21. Changes no rule names but that sit where a root or
its chain acts, after it began (swap filling on the vector DB that pages; KV cache rising on the
engines whose queue backs up), are "also seen" under that root, not left as unexplained.
"""

from __future__ import annotations

from dataclasses import dataclass

from infersight.diagnose.result import Diagnosis, HypothesisResult, UnexplainedChange

#: a change on the root's own instance may be dated a little before the root's first evidence
#: (a grid step or two of detection lag between signals); further back it is not its effect
SAME_INSTANCE_LEAD_S = 300.0


def earliest_onset(h: HypothesisResult) -> float | None:
    """The earliest of the hypothesis' onset and that of its supporting evidence."""
    times = [e.onset for e in h.evidence if e.supports and e.onset is not None]
    if h.onset is not None:
        times.append(h.onset)
    return min(times) if times else None


@dataclass(frozen=True)
class Attribution:
    #: per root id, the unexplained changes seen with it, in their original order
    also_seen: dict[str, tuple[UnexplainedChange, ...]]
    #: the rest: changes nothing confirmed accounts for
    unexplained: tuple[UnexplainedChange, ...]


def _chain_instances(d: Diagnosis, chain: tuple[str, ...]) -> set[str]:
    out: set[str] = set()
    for hid in chain:
        h = d.hypothesis(hid)
        if h is not None:
            out.update(h.instances)
    return out


def attribute(d: Diagnosis) -> Attribution:
    """Each unexplained change under the first root (by rank) it belongs to: on the root's
    own instances from shortly before its onset on, or on the instances of a later step of its
    chain from its onset on. A change with no onset, or elsewhere, stays unexplained."""
    roots = sorted(d.root_causes, key=lambda r: r.rank)
    seen: dict[str, list[UnexplainedChange]] = {r.hypothesis: [] for r in roots}
    rest: list[UnexplainedChange] = []
    for u in d.unexplained:
        owner = None
        for r in roots:
            h = d.hypothesis(r.hypothesis)
            start = earliest_onset(h) if h is not None else None
            if h is None or start is None or u.onset is None:
                continue
            own = u.instance in h.instances and u.onset >= start - SAME_INSTANCE_LEAD_S
            downstream = u.instance in _chain_instances(d, r.chain[1:]) and u.onset >= start
            if own or downstream:
                owner = r.hypothesis
                break
        if owner is None:
            rest.append(u)
        else:
            seen[owner].append(u)
    return Attribution({k: tuple(v) for k, v in seen.items() if v}, tuple(rest))
