"""A larger worker pool lets more requests onto the card at once (seed §3.3).

The service in front of an engine admits as many requests as it has workers. A pool made
larger (its configured size up, or the same work filling a smaller share of it) puts more
requests in flight on the GPU: more memory, larger batches, longer passes, out-of-memory
errors in bursts. The engine's occupancy and time are then the pool's consequence.
"""

from __future__ import annotations

from infersight.diagnose.path.change import Change
from infersight.diagnose.path.reader import Reader

NAME = "admitted more"
ORDER = 75


def doc() -> str:
    return (
        "**admitted more** — an engine's occupancy, time and errors are explained by the "
        "service in front admitting more at once: its pool made larger, or filling less of it"
    )


def explain(r: Reader, c: Change) -> list[Change]:
    me = r.world.nodes.get(c.node)
    if me is None or me.part not in ("engine", "gpu") or not c.bad or c.direction != "up":
        return []
    if c.facet not in ("saturation", "time", "errors"):
        return []
    front = r.sibling(c.node, "service")
    if front is None:
        return []
    found = r.at(front, ("capacity",), direction="up")
    found += [s for s in r.at(front, ("saturation",), direction="down")]
    return [x for x in found if r.precedes(x, c)]
