"""A replica lost takes its share of the work to the others (seed §2.3).

The load balancer spreads requests over the replicas it believes healthy: one down, out of
rotation or restarting sends its share to its peers, which see more arrivals (a third more
on three survivors of four) and, where their arrivals are not scraped, a longer queue. One
failing fast is routed around, and its failed requests retried on the rest. One
out of rotation since before the window leaves its share with the others all along: when
the traffic grows, they carry it alone.
"""

from __future__ import annotations

from infersight.diagnose.path.change import Change
from infersight.diagnose.path.reader import Reader

NAME = "a peer's share"
ORDER = 40


def doc() -> str:
    return (
        "**a peer's share** — more work at a replica is explained by a peer that stopped "
        "answering, restarted or lost its traffic (its share moved to the rest)"
    )


def lost(r: Reader, node: str) -> list[Change]:
    """The changes by which the peers of `node` stopped taking their share."""
    others = r.peers(node)
    gone = r.unavailable(others)
    fell = [a for a in r.at(others, ("arrivals",), direction="down")]
    idle = [a for a in r.at(others, ("capacity",), direction="down") if a.kind == "idle"]
    # a replica failing fast is skipped by health checks and least-connections, and its
    # failed requests are retried on the others
    # failed requests are retried on the others; but one whose own arrivals rose as much
    # gave none of its share away (a rise on every replica is more work for all of them)
    failing = [
        x
        for x in r.at(others, ("errors",), direction="up", bad=True)
        if not any(r.more_work(a) for a in r.at(_front(r, x.node), ("arrivals",)))
    ]
    return gone + fell + idle + failing


def _front(r: Reader, node: str) -> str:
    """Where a replica's arrivals are counted: its service, else the node itself."""
    return r.sibling(node, "service") or node


def explain(r: Reader, c: Change) -> list[Change]:
    me = r.world.nodes.get(c.node)
    if me is None or me.part not in ("service", "engine"):
        return []
    if r.more_work(c):
        node = c.node
    elif c.is_effect and c.bad and c.direction == "up":
        node = r.sibling(c.node, "service") or c.node
        if r.world.has(node, "arrivals"):
            return []  # its arrivals say whether it took more: read there
    else:
        return []
    # the share moves when the peer goes. Both sides are rates over one window: a doubling
    # crosses its threshold early in the window, a fall to nothing late, so one move is dated
    # apart by up to what dating can tell apart (`onset_slack_s`)
    return [p for p in lost(r, node) if p.onset <= c.onset or r.together(p, c)]
