"""More work at a node came from those that send it work: the trigger is where it began.

Requests reach a replica through the gateway and the API in front of it, and a retrieval
backend through the API that searches. A rise in arrivals is followed up the path to the
first sender whose own arrivals rose; at the gateway (nothing scraped sends it work) the rise
is the trigger: more users, a client retrying, a batch job.
"""

from __future__ import annotations

from infersight.diagnose.path.change import Change
from infersight.diagnose.path.reader import Reader
from infersight.diagnose.path.world import HOP

NAME = "demand"
ORDER = 20


def doc() -> str:
    return (
        "**demand** — more arrivals at a node are explained by more arrivals at those that "
        "send it work (the gateway, the API); where nothing sends the gateway work, the rise "
        "is the trigger"
    )


def senders(r: Reader, node: str) -> list[str]:
    out: list[str] = []
    todo = list(r.world.callers(node))
    seen: set[str] = set()
    while todo:
        n = todo.pop()
        if n in seen:
            continue
        seen.add(n)
        if n == HOP or not r.world.has(n, "arrivals"):
            todo += r.world.callers(n)
        if n != HOP:
            out.append(n)
    return out


def explain(r: Reader, c: Change) -> list[Change]:
    if not r.more_work(c):
        return []
    return [
        a for a in r.at(senders(r, c.node), ("arrivals",)) if r.more_work(a) and r.precedes(a, c)
    ]
