"""More work arrived: a node's time, queue and busy share grow with its arrivals.

By the utilisation law a server's busy share is arrivals × service time, and its queueing
delay grows as ρ/(1−ρ) (seed §2.2: queue up with GPU util up is a real compute shortage).
Whatever follows demand (a busy share, batch sizes, the process's CPU) or runs short under
it (CPU pressure, a disk's wait) is explained by the arrivals of the part that takes the
work on that machine. A hardware error or another process on the card is not made by load.
The gateway is a proxy: its time is its upstream's, never its own load's; an engine's pass
takes longer for what is in it, not for the rate. A saturated server
counts what it completes, not what was offered: where its own rate rose less, the work
offered to it is read at those that send it work (the gateway's rate).
"""

from __future__ import annotations

from infersight.diagnose.path.change import Change
from infersight.diagnose.path.reader import Reader
from infersight.diagnose.path.relations.demand import senders
from infersight.diagnose.path.world import HOP
from infersight.signals import all_signals

NAME = "more work"
ORDER = 10


def doc() -> str:
    return (
        "**more work** — a node's time, waiting and busy share (and whatever on its machine "
        "follows demand or runs short under it) are explained by more requests arriving at "
        "the part that takes the work there (utilisation law)"
    )


def _intake(r: Reader, node: str) -> list[str]:
    me = r.world.nodes.get(node)
    if me is None:
        return []
    if node == HOP:
        return [g for g in r.world.callers(HOP)]
    if me.part in ("gpu", "host"):
        users = r.world.users_of(node)
        out = list(users)
        for u in users:
            sib = r.sibling(u, "service")
            if sib is not None:
                out.append(sib)
        if me.part == "host":
            out += [n for n in (r.sibling(node, "service"), r.sibling(node, "retrieval")) if n]
        return out
    out = [node]
    sib = r.sibling(node, "service")
    if sib is not None and sib != node:
        out.append(sib)
    return out


def _alike(c: Change, a: Change) -> bool:
    """A change that sets one replica apart from its peers (a fleet outlier) is made by more
    work only where that replica took more work than they did."""
    return c.kind != "fleet_outlier" or a.kind == "fleet_outlier"


def _in_proportion(r: Reader, c: Change, a: Change) -> bool:
    """Whether more work `a` can make `c`: a queue, a time or an occupancy (what rides the
    bursts: a KV cache, a worker pool) grows faster than the load (by ρ/(1−ρ)); a busy share,
    or a resource used per unit of work, only in proportion to it (utilisation law). Paging
    that went from nothing to thousands a second under a third more searches ran short on
    its own."""
    sig = all_signals().get(c.signal)
    if c.facet in ("time", "waiting", "errors") or (sig is not None and sig.rides_bursts):
        return True
    if not c.ratio or not a.ratio:
        return c.facet == "saturation"
    return c.ratio <= a.ratio * r.config.per_unit_slack


def explain(r: Reader, c: Change) -> list[Change]:
    if not c.bad or c.facet in ("arrivals", "output", "availability") or not r.loads_with_demand(c):
        return []
    if c.facet == "saturation" and c.direction == "down":
        return []
    me = r.world.nodes.get(c.node)
    if me is None or me.part == "gateway":
        return []
    if me.part == "engine" and c.facet == "time":
        return []  # a pass takes longer for what is in it (fuller batches), not for the rate
    if c.facet == "time" and not _piled(r, c):
        return []
    intake = _intake(r, c.node)
    found = [
        a
        for a in r.at(intake, ("arrivals",))
        if r.more_work(a) and r.precedes(a, c) and _fits(r, c, a)
    ]
    if found or not c.is_effect or any(r.world.has(n, "arrivals") for n in intake):
        return found
    # nothing counts what reaches this node: the work offered to it is read at its senders
    offered = [s for n in intake for s in senders(r, n)]
    return [
        a
        for a in r.at(offered, ("arrivals",))
        if r.more_work(a) and r.precedes(a, c) and _fits(r, c, a)
    ]


def _piled(r: Reader, c: Change) -> bool:
    """More work makes a request's time longer only by what it waits for: a queue, a pool
    or a card busier (ρ/(1−ρ)). Where the replica's waiting and busy shares are read and
    none of them rose with it, its longer time came from elsewhere."""
    nodes = [c.node] + [n for p in ("service", "engine") if (n := r.sibling(c.node, p))]
    nodes += r.world.runs_on.get(c.node, [])
    facets = ("waiting", "saturation")
    if not any(r.world.has(n, f) for n in nodes for f in facets):
        return True  # nothing there reads it (the hop, a proxy): the time is all there is
    return any(x.bad and x.direction == "up" and r.together(x, c) for x in r.at(nodes, facets))


def _fits(r: Reader, c: Change, a: Change) -> bool:
    return _in_proportion(r, c, a) and _alike(c, a) and not r.carried_before(a, c)
