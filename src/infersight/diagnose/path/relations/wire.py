"""Time lost on the wire: retransmits, drops, a full listen queue on either end of a link
(seed §4.3).

A segment retransmitted after a timeout adds hundreds of milliseconds that the server never
sees: its own histograms start when the request has arrived. So time the gateway saw added
between itself and the servers (the hop's added time) is explained by the network of the
hosts on either end, the gateway's and the servers', or by the gateway's own measure of the
link: connecting to the upstream slowly (DNS, TLS, an exhausted connection pool).
"""

from __future__ import annotations

from infersight.diagnose.path.change import Change
from infersight.diagnose.path.reader import Reader
from infersight.diagnose.path.relations.runs_on import follows_load
from infersight.diagnose.path.world import HOP

NAME = "the wire"
ORDER = 65


def doc() -> str:
    return (
        "**the wire** — time a client saw added before its servers (the hop's added time) is "
        "explained by retransmits, drops or a full listen queue on the hosts at either end"
    )


def explain(r: Reader, c: Change) -> list[Change]:
    if c.node != HOP or c.kind != "added":
        return []
    ends = list(r.world.calls.get(HOP, [])) + list(r.world.callers(HOP))
    hosts = [h for n in ends for h in r.world.runs_on.get(n, []) if h.startswith("host:")]
    found = r.at(hosts + list(r.world.callers(HOP)), ("network",), bad=True)
    return [x for x in found if r.precedes(x, c) and not follows_load(x)]
