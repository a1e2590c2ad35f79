"""Failed and timed-out requests come back: clients retry them (seed §3.2: OOMs, crashes and
retries shift load onto neighbours).

A request that fails or outlasts its client's timeout is sent again, so a part that got
slower or started failing receives more requests than its users send. That rise is the
failure's consequence, not a trigger of its own. Clients retry a failed request a few times
at most (`PathConfig.retries_max_factor`): a rise of more than the failures can resend came
from the users.
"""

from __future__ import annotations

from infersight.diagnose.path.change import Change
from infersight.diagnose.path.reader import Reader
from infersight.signals import all_signals

NAME = "retries"
ORDER = 25


def doc() -> str:
    return (
        "**retries** — more arrivals at a part are explained by its requests failing or "
        "slowing past clients' timeouts before: they are sent again"
    )


def _resends(r: Reader, c: Change, x: Change) -> bool:
    """Whether failures `x` can resend the work `c` gained: each failed request comes back at
    most `retries_max_factor` − 1 more times, so the added arrivals are at most that many
    times the failures a second (a count), or that share of the arrivals (a ratio). A time
    that grew says nothing of how many failed: the rise is bounded by the factor alone."""
    f = r.config.retries_max_factor
    if c.ratio is not None and c.ratio > f:
        return False
    if c.before is None or c.after is None or x.after is None or x.facet != "errors":
        return True
    sig = all_signals().get(x.signal)
    unit = sig.unit if sig is not None else ""
    if unit == "per_s":
        return c.after - c.before <= (f - 1.0) * x.after
    if unit == "ratio":
        return c.after - c.before <= (f - 1.0) * x.after * c.after
    return True


def explain(r: Reader, c: Change) -> list[Change]:
    if not r.more_work(c):
        return []
    found = r.at(c.node, ("errors", "time"), direction="up", bad=True)
    return [x for x in found if x.onset < c.onset and _resends(r, c, x)]
