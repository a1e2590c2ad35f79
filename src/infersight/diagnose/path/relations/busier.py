"""A card kept busier heats and draws more power (seed §4.2).

By the utilisation law a card's busy share is its work's rate times the time each piece
takes on it: passes that take longer, or more of them, keep it busier at the same load, and
a busier card runs hotter and draws more power. A card hot with no clock pulled down is
working harder, not throttling.
"""

from __future__ import annotations

from infersight.diagnose.path.change import Change
from infersight.diagnose.path.reader import Reader

NAME = "busier"
ORDER = 79
_HEAT = frozenset({"infra.gpu_temp_c", "infra.gpu_power_w"})
_BUSY = frozenset({"inference.gpu_util", "inference.tensor_active"})


def doc() -> str:
    return (
        "**busier** — a card's busy share, heat and power are explained by the work on it "
        "taking longer or running fuller (utilisation law), heat and power by its busy share"
    )


def explain(r: Reader, c: Change) -> list[Change]:
    me = r.world.nodes.get(c.node)
    if me is None or me.part != "gpu" or c.direction != "up" or not c.bad:
        return []
    if c.signal not in _BUSY | _HEAT:
        return []
    engine = r.sibling(c.node, "engine")
    found = r.at(engine, ("time", "saturation"), direction="up", bad=True) if engine else []
    if c.signal in _HEAT:
        found += [x for x in r.at(c.node, ("saturation",), direction="up") if x.signal in _BUSY]
    return [x for x in found if r.precedes(x, c)]
