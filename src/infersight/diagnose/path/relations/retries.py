"""Failed and timed-out requests come back: clients retry them (seed §3.2: OOMs, crashes and
retries shift load onto neighbours).

A request that fails or outlasts its client's timeout is sent again, so a part that got
slower or started failing receives more requests than its users send. That rise is the
failure's consequence, not a trigger of its own.
"""

from __future__ import annotations

from infersight.diagnose.path.changes import Change
from infersight.diagnose.path.reader import Reader

NAME = "retries"
ORDER = 25


def doc() -> str:
    return (
        "**retries** — more arrivals at a part are explained by its requests failing or "
        "slowing past clients' timeouts before: they are sent again"
    )


def explain(r: Reader, c: Change) -> list[Change]:
    if not r.more_work(c):
        return []
    found = r.at(c.node, ("errors", "time"), direction="up", bad=True)
    return [x for x in found if x.onset < c.onset]
