"""The part changed itself: its runtime, its configuration, or what it is given.

A process that collects garbage longer, spends more CPU at the same load, was given fewer
workers or a longer batching window, or receives longer prompts and fewer prefix hits, is
slower per unit of work with nothing else changed (seed §3.1, §3.3, §5.2); one that just
restarted serves cold, and takes the work that waited for it at once (§4.3). A cache that
evicts at its memory limit misses more (§4.1). A resource running short (heat, pressure,
paging) explains a part's time, queue and errors, not that it got busier or fuller: those
rise beside it from the same work, unless the resource is taken by something more work does
not make (another process on the card). The engine and the service on one instance
are one process's two faces: what the engine is given shows in the service's times.
"""

from __future__ import annotations

from infersight.diagnose.path.change import Change
from infersight.diagnose.path.reader import Reader

NAME = "its own change"
ORDER = 80
_DRIVERS = ("process", "resource", "capacity", "input", "availability")


def doc() -> str:
    return (
        "**its own change** — a part's time, queue, busy share and errors are explained by "
        "its own runtime (GC, CPU), configuration (workers, batching window), resources, a "
        "restart, or what it is given (tokens, prefix hits); its busy share and fullness by "
        "no resource more work also strains (heat, pressure), only by one it does not (another "
        "process on the card); a cache's misses by its evictions and memory"
    )


def explain(r: Reader, c: Change) -> list[Change]:
    if not c.bad:
        return []
    if c.facet == "sends":
        found = r.at(c.node, ("resource",), bad=True)
        found += r.at(c.node, ("saturation",), direction="up")
        return [x for x in found if x is not c and r.precedes(x, c)]
    if not c.is_effect or (c.facet == "saturation" and c.direction == "down"):
        return []
    me = r.world.nodes.get(c.node)
    nodes = [c.node]
    if me is not None and me.part in ("engine", "service"):
        nodes += [n for p in ("engine", "service") if (n := r.sibling(c.node, p))]
    found = [x for x in r.at(nodes, _DRIVERS, bad=True) if x is not c]
    if c.facet == "saturation":
        # a resource running short slows work; it does not make a part busier or fuller.
        # Heat, CPU or memory pressure rise beside a busier part, from the same work; only
        # what more work does not make (another process on the card) takes a share of it
        found = [x for x in found if x.facet != "resource" or r.independent(x)]
    # a restart explains what followed it, never what came before
    return [
        x for x in found if r.precedes(x, c) and (x.facet != "availability" or x.onset <= c.onset)
    ]
