"""A part less busy than before was sent less work, or its callers were held up.

GPUs idle and batches shrink when fewer requests reach them: fewer arrived, or the service
in front is blocked on something else (seed §5.2: the queue grows while GPU utilisation
falls, because requests are not getting to the GPU). An engine that still holds as much
work in flight was not starved of it: it stopped producing on its own (a hang).
"""

from __future__ import annotations

from infersight.diagnose.path.change import Change
from infersight.diagnose.path.reader import Reader

NAME = "less work"
ORDER = 100


def doc() -> str:
    return (
        "**less work** — a part less busy than before is explained by fewer arrivals, or by "
        "its callers being held up (their time or queue grew)"
    )


_IN_FLIGHT = ("inference.running_requests", "inference.batch_size")


def _kept_its_work(r: Reader, c: Change) -> bool:
    """The engine behind `c` reports work in flight, and it did not fall."""
    engine = c.node if c.node.startswith("engine:") else r.sibling(c.node, "engine")
    if engine is None or not set(_IN_FLIGHT) & r.reader_signals(engine):
        return False
    fell = [x for x in r.at(engine, ("saturation",), direction="down") if x.signal in _IN_FLIGHT]
    return not fell


def explain(r: Reader, c: Change) -> list[Change]:
    if c.facet not in ("saturation", "output") or c.direction != "down":
        return []
    if c.signal not in _IN_FLIGHT and _kept_its_work(r, c):
        return []
    nodes = [c.node] + [n for p in ("service",) if (n := r.sibling(c.node, p))]
    users = r.world.users_of(c.node)
    nodes += users + [n for u in users if (n := r.sibling(u, "service"))]
    found = r.at(nodes, ("arrivals",), direction="down")
    callers = [a for n in nodes for a in r.world.callers(n) if a != c.node]
    found += r.at(callers, ("waiting", "time"), direction="up", bad=True)
    return [x for x in found if x is not c and r.precedes(x, c)]
