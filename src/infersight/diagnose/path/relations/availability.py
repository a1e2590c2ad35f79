"""A part stopped answering because what it runs on failed, or it ran out of memory.

A GPU that fell off the bus (an Xid, uncorrectable ECC errors) takes its process down; an
engine out of GPU memory crashes and restarts (seed §3.2, §4.2). A part that stopped with
neither is itself where the walk ends: a crash, a kill, a host gone.
"""

from __future__ import annotations

from infersight.diagnose.path.change import Change
from infersight.diagnose.path.reader import Reader

NAME = "it stopped"
ORDER = 90
_MEMORY = frozenset({"inference.gpu_mem_used_ratio", "inference.gpu_mem_used_bytes"})


def doc() -> str:
    return (
        "**it stopped** — a part that stopped answering or restarted is explained by a "
        "hardware error on what it runs on, or by running out of memory"
    )


def explain(r: Reader, c: Change) -> list[Change]:
    if c.facet != "availability" or not c.bad:
        return []
    nodes = [c.node] + [n for p in ("engine", "service") if (n := r.sibling(c.node, p))]
    under = [u for n in nodes for u in r.world.runs_on.get(n, [])]
    found = [x for x in r.at(under + nodes, ("resource",), bad=True) if r.independent(x)]
    found += [
        x for x in r.at(nodes, ("errors",), direction="up") if x.signal == "inference.oom_rate"
    ]
    return [x for x in found if x is not c and r.precedes(x, c)]
