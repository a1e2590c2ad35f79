"""A replica's own view of a cache follows the cache (seed §4.1).

A service that counts its cache lookups (hits and misses per request) reads the cache it
uses: its hit ratio falls when the cache server evicts, was emptied, or stopped answering.
The server's change is the one to follow.
"""

from __future__ import annotations

from infersight.diagnose.path.change import Change
from infersight.diagnose.path.reader import Reader

NAME = "the cache it reads"
ORDER = 82


def doc() -> str:
    return (
        "**the cache it reads** — a service's own cache counts (its hit ratio, its misses) "
        "are explained by the cache server changing: evicting, emptied, or not answering"
    )


def explain(r: Reader, c: Change) -> list[Change]:
    me = r.world.nodes.get(c.node)
    if me is None or me.part != "cache" or c.facet != "sends" or not c.bad:
        return []
    servers = [n for n in r.world.calls.get(c.node, []) if n.startswith("cache:")]
    found = r.at(servers, ("sends", "resource", "saturation"), bad=True)
    found += r.unavailable(servers)
    return [x for x in found if r.precedes(x, c)]
