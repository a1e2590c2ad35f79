"""A fuller engine takes longer per pass (seed §3.1).

A forward pass runs every sequence in the batch: more requests running, larger batches or
longer contexts filling the KV cache make each pass longer, whatever made them fuller (more
work, requests held longer, a pool that admits more).
"""

from __future__ import annotations

from infersight.diagnose.path.change import Change
from infersight.diagnose.path.reader import Reader

NAME = "fuller batches"
ORDER = 78
_FILL = frozenset(
    {"inference.batch_size", "inference.running_requests", "inference.kv_cache_usage"}
)


def doc() -> str:
    return (
        "**fuller batches** — an engine's pass time is explained by more running in each pass: "
        "larger batches, more requests running, a fuller KV cache"
    )


def explain(r: Reader, c: Change) -> list[Change]:
    me = r.world.nodes.get(c.node)
    if me is None or me.part != "engine" or c.facet != "time" or c.direction != "up":
        return []
    found = [x for x in r.at(c.node, ("saturation",), direction="up") if x.signal in _FILL]
    return [x for x in found if r.precedes(x, c)]
