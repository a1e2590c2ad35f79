"""A slower or failing callee holds its callers' workers longer (seed §5.2).

A node's time per request includes the calls it makes. When a callee gets slower, fills up
(an engine's KV cache full, preempting) or stops producing, the caller's workers are held
longer (Little's law: busy workers = arrivals × time held), its pool fills and a queue forms
in front of it, and its errors follow the callee's. That queue is the callee's consequence:
the walk goes on into the callee. The virtual hop, where it added no time of its own, is
looked through to the servers behind it.
"""

from __future__ import annotations

from infersight.diagnose.path.change import Change
from infersight.diagnose.path.reader import Reader
from infersight.diagnose.path.world import HOP
from infersight.signals import all_signals

NAME = "a slower callee"
ORDER = 60


def doc() -> str:
    return (
        "**a slower callee** — a node's time, queue, busy share and errors are explained by "
        "the time or errors of what it calls, or by a callee that stopped answering "
        "(Little's law)"
    )


def callees(r: Reader, node: str) -> list[str]:
    out: list[str] = []
    for d in r.world.calls.get(node, []):
        if d == HOP and not r.at_node.get(HOP):
            out += r.world.calls.get(HOP, [])
        else:
            out.append(d)
    return out


def stalled(r: Reader, out: Change) -> bool:
    """An output that fell with no failure before it: the part holds its requests (a hang).
    Output that fell once requests began to fail (timeouts, rejections) is the failing's."""
    nodes = [out.node] + [n for p in ("service", "engine") if (n := r.sibling(out.node, p))]
    failed = r.at(nodes, ("errors",), direction="up", bad=True)
    return not any(f.onset <= out.onset for f in failed)


def _with_traffic(r: Reader, x: Change) -> bool:
    """A count of misses a second rises with the traffic; each request's trip to the backend
    is its share of misses (the hit ratio), read there where it is scraped."""
    sig = all_signals().get(x.signal)
    if sig is None or not sig.load:
        return False
    return any(
        (s := all_signals().get(n)) is not None and s.facet == "sends" and not s.load
        for n in r.reader_signals(x.node)
    )


def explain(r: Reader, c: Change) -> list[Change]:
    if not (c.is_effect and c.bad and c.direction == "up"):
        return []
    ds = callees(r, c.node)
    found = r.at(ds, ("time", "waiting", "errors"), direction="up", bad=True)
    # what fills in the serving path and gates admission (a KV cache, a worker pool), not
    # what merely fills (a cache's memory)
    found += [
        x
        for x in r.at(ds, ("saturation",), direction="up", bad=True)
        if (sig := all_signals().get(x.signal)) is not None and sig.rides_bursts
    ]
    # a callee that stopped producing (an engine that generates nothing) holds its callers'
    # requests as long as a slow one; a cache that misses more sends each miss on to the
    # backend, and that trip is in the caller's time
    found += [x for x in r.at(ds, ("output",), direction="down", bad=True) if stalled(r, x)]
    if c.facet in ("time", "waiting"):
        found += [x for x in r.at(ds, ("sends",), bad=True) if not _with_traffic(r, x)]
    found += r.unavailable(ds)
    return [d for d in found if r.precedes(d, c)]
