"""A request's time includes its wait: a node whose queue grew is slower by that wait.

What made the queue grow (more work, fewer servers, a slower callee) is then asked of the
queue (seed §3.3: requests wait for a worker, not for compute).
"""

from __future__ import annotations

from infersight.diagnose.path.change import Change
from infersight.diagnose.path.reader import Reader

NAME = "waited"
ORDER = 5


def doc() -> str:
    return "**waited** — a node's time is explained by its own queue: the wait is part of it"


def explain(r: Reader, c: Change) -> list[Change]:
    if c.facet != "time" or not c.bad or c.direction != "up":
        return []
    found = r.at(c.node, ("waiting",), direction="up", bad=True)
    return [x for x in found if r.precedes(x, c)]
