"""A replica that takes less work stopped answering, or was slow or failing first.

The balancer sends nothing to a target that is down, and least-connections or health checks
route away from one that is slow or returns errors, or whose card failed under it (an Xid:
its health check fails). A replica whose arrivals fell with none of these was taken out of
rotation: that is its own change (the walk ends there). A server that counts the requests it
finishes reads fewer when its engine completes fewer: stalled, or gone.
"""

from __future__ import annotations

from infersight.diagnose.path.change import Change
from infersight.diagnose.path.reader import Reader
from infersight.diagnose.path.relations.callees import stalled

NAME = "routed away"
ORDER = 50


def doc() -> str:
    return (
        "**routed away** — fewer arrivals at a replica are explained by the replica not "
        "answering, or being slow or failing before (the balancer routes away)"
    )


def explain(r: Reader, c: Change) -> list[Change]:
    if c.facet != "arrivals" or c.direction != "down":
        return []
    nodes = [c.node] + [n for n in (r.sibling(c.node, "engine"),) if n]
    found = r.unavailable(nodes)
    under = [u for n in nodes for u in r.world.runs_on.get(n, [])]
    found += [x for x in r.at(under, ("resource",), bad=True) if r.independent(x)]
    found += [
        e
        for e in r.at(nodes, ("time", "errors"), direction="up")
        if e.bad and e.onset < c.onset - r.step
    ]
    found += [x for x in r.at(nodes, ("output",), direction="down", bad=True) if stalled(r, x)]
    return [e for e in found if r.precedes(e, c)]
