"""What a part runs on ran short or failed: the host's CPU, memory, disk or network, the GPU's
clock, heat or hardware (seed §2.2, §4.2, §4.3).

Work on a machine waits for a core, a page, a disk write or a retransmitted segment; a
model's pass runs at the GPU's clock. A change there explains a slower part on top of it
and, for an engine that ran out of GPU memory, its out-of-memory errors and crashes.
"""

from __future__ import annotations

from infersight.diagnose.path.change import Change
from infersight.diagnose.path.reader import Reader
from infersight.signals import all_signals

NAME = "what it runs on"
ORDER = 70
_CARD_MEMORY = frozenset({"inference.gpu_mem_used_ratio", "inference.gpu_mem_used_bytes"})
_CARD_BUSY = frozenset({"inference.gpu_util", "inference.tensor_active"})


def doc() -> str:
    return (
        "**what it runs on** — a part's time and errors are explained by its host or GPU "
        "running short or failing (pressure, paging, disk, network; clock, heat, hardware "
        "errors)"
    )


def follows_load(c: Change) -> bool:
    sig = all_signals().get(c.signal)
    return sig is not None and sig.load


def explain(r: Reader, c: Change) -> list[Change]:
    if not c.bad or c.facet not in ("time", "waiting", "saturation", "errors", "availability"):
        return []
    if c.facet == "saturation" and c.direction == "down":
        return []
    under = r.world.runs_on.get(c.node, [])
    hosts = [u for u in under if u.startswith("host:")]
    cards = [u for u in under if not u.startswith("host:")]
    # a model's pass runs on the card and the host's CPU and memory; the network only delays
    # what goes in and out of the parts that talk to others
    wire = () if c.node.startswith("engine:") else ("network",)
    found = r.at(hosts, ("resource", "capacity"), bad=True)
    # a count that follows the traffic (dropped packets a second) says little on its own;
    # the link's health is its share of retransmits and its overflowing listen queue
    found += [x for x in r.at(hosts, wire, bad=True) if not follows_load(x)]
    found += r.at(hosts, ("saturation",), direction="up")
    # a card slows the work on it by its clock, or fails; it heats and draws power because
    # the work on it is busier, which explains nothing of its own. A card whose memory rose
    # and that got busier holds other work than ours (another process, seed §3.2): its busy
    # share and its memory are what slowed us
    found += r.at(cards, ("capacity",), bad=True)
    found += [x for x in r.at(cards, ("resource",), bad=True) if r.independent(x)]
    filled = [x for x in r.at(cards, ("saturation",), direction="up") if x.signal in _CARD_MEMORY]
    if filled:
        # another process comes with its memory and its kernels at once
        busy = [
            x
            for x in r.at(cards, ("saturation",), direction="up")
            if x.signal in _CARD_BUSY and any(r.together(x, f) for f in filled)
        ]
        found += filled + busy if busy else []
        # a card left without headroom (seed §3.2) fails allocations and preempts: slower
        # and failing work on it, whatever else runs there
        full = r.config.card_full
        found += [x for x in filled if x.signal.endswith("_ratio") and (x.after or 0) >= full]
    if c.facet in ("errors", "availability"):
        # a card's memory filling fails allocations and takes the engine down, counted as
        # OOMs or not; how busy it is fails nothing
        found += filled
    return [x for x in found if r.precedes(x, c)]
