"""`adds`: where on the request path the added time sits. A client-timed latency (the
gateway's view of its upstream) grew, since the incident began, by at least `factor` times
the most that the server-timed `than` grew on any instance carrying it (the engines' own
request time): the rest of the time was added between them, on the wire or in a hop without
metrics. A client figure keyed by the server it times (a gateway's view of one upstream
server) is set against that server's own growth. Time lost before the server has the request
is in the client's figure and never in the server's (`measured_at` in signals.yaml). Read in
seconds, medians since the onset against medians before it; the client's growth must also
pass the unit's floor."""

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
STATES = ("adds",)
#: the options a condition of this kind takes (see `kb.Condition`)
ACCEPTS = frozenset({"than", "factor"})
#: where docs/rules.md lists it among the condition kinds
ORDER = 120


def doc(cfg: DiagnoseConfig) -> str:
    """Its entry in docs/rules.md's list of condition kinds."""
    return (
        "`adds` — a client-timed latency grew by the factor times the most the server-timed "
        "`than` grew on any instance (on the same instance, where the client's figure is keyed "
        "by the server it times): the rest was added between client and server"
    )


def check(c: Condition) -> str | None:
    """A client-timed latency against a server-timed `than`, by a factor."""
    if c.than is None:
        return "state 'adds' needs `than`"
    if c.factor is None:
        return "state 'adds' needs a factor"
    sig, than = all_signals().get(c.signal), all_signals().get(c.than)
    if sig is None or sig.measured_at != "client" or than is None or than.measured_at != "server":
        return (
            "state 'adds' compares a client-timed latency with a server-timed `than` "
            "(measured_at in signals.yaml)"
        )
    return None


def _grew(before: float | None, after: float | None) -> float | None:
    return None if before is None or after is None else after - before


def _server_growth(ctx: Context, than: str, k: int) -> tuple[int, float, bool]:
    """(how many instances carry `than` before and since grid index k, the most it grew on
    any, whether one that carried it before stopped since): the same for every client
    instance, so read once per window, not once each. A server that stopped reporting (a hung
    engine completes nothing, so its histogram has no quantile) grew by an unknown amount."""
    key = ("adds_servers", than, str(k))
    if key not in ctx.memo:
        pairs = list(ctx.split_medians(than, k).values())
        grew = [g for b, a in pairs if (g := _grew(b, a)) is not None]
        stopped = any(b is not None and a is None for b, a in pairs)
        ctx.memo[key] = (len(grew), max(grew, default=0.0), stopped)
    out = ctx.memo[key]
    assert isinstance(out, tuple)
    return out


def read(ctx: Context, c: Condition, inst: str, shown: bool, since: float | None) -> Reading:
    assert c.than is not None and c.factor is not None
    k = ctx.split()
    before, after = ctx.split_medians(c.signal, k).get(inst, (None, None))
    client = _grew(before, after)
    own = ctx.split_medians(c.than, k).get(inst, (None, None))
    keyed = own != (None, None)
    if keyed:
        # the client's figure is keyed by the server it times (a gateway's view of one
        # upstream): that server's own growth, not the fleet's
        grown = _grew(*own)
        carried, most, stopped = (0, 0.0, True) if grown is None else (1, grown, False)
    else:
        carried, most, stopped = _server_growth(ctx, c.than, k)
    if client is None or not carried or stopped or before is None or after is None:
        return NOT_HELD
    server = max(0.0, most)
    if client < ctx.config.adds_floor_s or client < c.factor * server:
        return NOT_HELD
    u = ctx.unit(c.signal)
    text = (
        f"{c.signal} on {inst} grew {format_value(client, u)} since the incident began "
        f"({format_value(before, u)} → {format_value(after, u)}) while {c.than} grew "
        + (
            f"{format_value(server, u)} on {inst} itself: "
            if keyed
            else f"at most {format_value(server, u)} on any of {carried} instance(s): "
        )
        + f"{format_value(client - server, u)} added between them"
    )
    ev = from_level(ctx, c.signal, inst, "above", before, after, before, ctx.onset)
    score = min(ctx.config.state_score_cap, client / max(server, ctx.config.adds_floor_s))
    return Reading(True, dataclasses.replace(ev, statement=text), ctx.onset, score)
