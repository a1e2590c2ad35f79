"""A cache that misses more sends more work to the backend behind it (seed §4.1, §5.2).

A hit ratio that fell, misses that rose, concurrent loads of one key (a stampede) or a cache
that stopped answering (every lookup a miss) all send the work on to retrieval. A backend
whose own search rate is scraped shows the rise as arrivals; one without it is read through
its time and queue. A stampede sends its loads at once: a burst the backend's average search
rate hides, read through the backend's time whatever its rate did.
"""

from __future__ import annotations

from infersight.diagnose.path.change import Change
from infersight.diagnose.path.reader import Reader
from infersight.signals import all_signals

NAME = "misses"
ORDER = 30


def doc() -> str:
    return (
        "**misses** — more work at a retrieval backend is explained by a cache in front of it "
        "that misses more, loads one key many times at once, or stopped answering"
    )


def explain(r: Reader, c: Change) -> list[Change]:
    if not c.bad:
        return []
    arrived = r.more_work(c)
    slower = c.is_effect and c.direction == "up"
    if not (arrived or slower):
        return []
    caches = r.world.senders_of_misses(c.node)
    found = r.at(caches, ("sends",), bad=True) + r.unavailable(caches)
    if not arrived and r.world.has(c.node, "arrivals"):
        # its search rate did not rise: only a burst that rate averages away (a stampede's
        # concurrent loads of one key) sent it the work
        found = [m for m in found if (s := all_signals().get(m.signal)) is not None and s.at_once]
    return [m for m in found if r.precedes(m, c)]
