"""`outwaits_load` (with `than`, seed §3.3): a queue wait longer than busy servers can make.
Requests queue for lack of servers only while the servers are busy: at a utilisation ρ the
mean wait of one server is ρ(1+C²)/(2(1−ρ)) service times (Pollaczek–Khinchine, C the
coefficient of variation). ρ is bounded by the request rate times the service time `than`
(more servers, or requests sharing a batch, only lower it), so a mean wait (`signal`) past
`DiagnoseConfig.load_wait_margin` times ρ/(1−ρ) service times, since the incident began, is
time spent waiting for something other than a server: a batching window, a load still
running, a lock. Where the rate or the service time is missing, or ρ reaches 1, it does not
hold: it can only rule a capacity shortfall out, never suggest one on no data."""

from __future__ import annotations

import dataclasses

from infersight.diagnose.config import DiagnoseConfig
from infersight.diagnose.context import Context
from infersight.diagnose.evidence import from_level
from infersight.diagnose.kb import Condition
from infersight.diagnose.states.reading import NOT_HELD, Reading
from infersight.signals import all_signals
from infersight.units import format_value

#: the states this kind reads: `registry.py` finds the module by them
STATES = ("outwaits_load",)
#: the options a condition of this kind takes (see `kb.Condition`)
ACCEPTS = frozenset({"than"})
#: where docs/rules.md lists it among the condition kinds
ORDER = 125
#: the arrival rate the utilisation is read from, on the same instance
RATE = "service.request_rate"


def doc(cfg: DiagnoseConfig) -> str:
    """Its entry in docs/rules.md's list of condition kinds."""
    return (
        "`outwaits load` — the mean queue wait since the incident began is longer than "
        f"{cfg.load_wait_margin:g}× ρ/(1−ρ) service times (`than`), ρ ≤ request rate × service "
        "time: more waiting than busy servers can make (Pollaczek–Khinchine)"
    )


def check(c: Condition) -> str | None:
    """A wait in seconds against a service time in seconds."""
    if c.than is None:
        return "state 'outwaits_load' needs `than`, the service time"
    sig, than = all_signals().get(c.signal), all_signals().get(c.than)
    if sig is None or than is None or sig.unit != "s" or than.unit != "s":
        return "state 'outwaits_load' compares a wait with a service time, both in seconds"
    return None


def read(ctx: Context, c: Condition, inst: str, shown: bool, since: float | None) -> Reading:
    assert c.than is not None
    k = ctx.split(since)
    before, wait = ctx.split_medians(c.signal, k).get(inst, (None, None))
    _, service = ctx.split_medians(c.than, k).get(inst, (None, None))
    _, rate = ctx.split_medians(RATE, k).get(inst, (None, None))
    if wait is None or service is None or rate is None or service <= 0 or rate < 0:
        return NOT_HELD
    rho = rate * service
    if rho >= 1.0:
        return NOT_HELD
    bound = ctx.config.load_wait_margin * service * rho / (1.0 - rho)
    if wait <= bound:
        return NOT_HELD
    u = ctx.unit(c.signal)
    text = (
        f"{c.signal} on {inst} {format_value(wait, u)} since the incident began, while "
        f"{format_value(rate, ctx.unit(RATE))} × {format_value(service, u)} ({c.than}) keeps "
        f"its server busy {rho:.0%} of the time at most: a queue for busy servers would wait "
        f"under {format_value(bound, u)}"
    )
    ev = from_level(ctx, c.signal, inst, "above", before, wait, bound, ctx.onset)
    score = min(ctx.config.state_score_cap, wait / max(bound, 1e-9))
    return Reading(True, dataclasses.replace(ev, statement=text), ctx.onset, score)
