"""Evidence with figures: every observation becomes one sentence a person can check."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from infersight.detect import Anomaly
from infersight.diagnose.result import Evidence
from infersight.units import format_duration, format_ratio, format_value

if TYPE_CHECKING:
    from infersight.diagnose.context import Context
    from infersight.diagnose.kb import Condition


def _ratio(base: float | None, obs: float | None) -> str:
    if base is None or obs is None or base == 0:
        return ""
    text = format_ratio(obs / base)
    return f" ({text})" if text else ""


def _since(at: float | None) -> str:
    return "since the incident began" if at is None else f"since {clock(at)}"


def clock(ts: float, ref: float | None = None) -> str:
    """A moment as a person reads it on a dashboard: "02:20 UTC"; with the date when it is not
    the day of `ref` (the window's end)."""
    t = time.gmtime(ts)
    if ref is not None and time.gmtime(ref)[:3] != t[:3]:
        return time.strftime("%Y-%m-%d %H:%M UTC", t)
    return time.strftime("%H:%M UTC", t)


def from_anomaly(
    a: Anomaly, ctx: Context, supports: bool, incident: float | None = None
) -> Evidence:
    """A detected anomaly as a sentence; `incident`: a deviation's median since the incident
    began, where a condition was judged on it (the excursion began well before), and then
    the evidence's figure and window are the incident's."""
    u = ctx.unit(a.signal)
    since = f", since {clock(a.onset, ctx.frame.end)}"
    if a.kind == "deviation":
        refs = ", ".join(a.baselines) or "baseline"
        text = (
            f"{a.signal} on {a.instance} {a.direction} to {format_value(a.observed, u)} against "
            f"{format_value(a.baseline, u)} ({refs}){_ratio(a.baseline, a.observed)}{since}"
        )
        if incident is not None:
            text += (
                f"; {format_value(incident, u)} since the incident began"
                f"{_ratio(a.baseline, incident)}"
            )
    elif a.kind == "fleet_outlier":
        text = (
            f"{a.signal} on {a.instance} at {format_value(a.observed, u)} while its peers are at "
            f"{format_value(a.baseline, u)}{_ratio(a.baseline, a.observed)}{since}"
        )
    elif a.kind == "trend":
        text = f"{a.signal} on {a.instance} trending {a.direction}: {a.detail.split(': ', 1)[-1]}"
    else:
        text = f"{a.signal} on {a.instance} stopped reporting{since} ({a.detail or 'absent'})"
    return Evidence(
        signal=a.signal,
        instance=a.instance,
        kind=a.kind,
        supports=supports,
        statement=text,
        window_start=a.onset if incident is None else ctx.frame.times[ctx.split()],
        window_end=a.end if a.end is not None else ctx.frame.end,
        baseline=a.baseline,
        observed=a.observed if incident is None else incident,
        unit=u,
        onset=a.onset,
    )


def from_level(
    ctx: Context,
    signal: str,
    inst: str,
    state: str,
    pre: float | None,
    observed: float,
    level: float,
    onset: float,
    since: float | None = None,
) -> Evidence:
    """A level, peak or shift read since the incident began (or since `since`)."""
    u = ctx.unit(signal)
    began = _since(since)
    if state == "event":
        text = (
            f"{signal} on {inst} reached {format_value(observed, u)} "
            f"(above {format_value(level, u)}; before: {format_value(pre, u)})"
        )
    elif state in ("max", "min"):
        word = "peaked at" if state == "max" else "fell to"
        text = (
            f"{signal} on {inst} {word} {format_value(observed, u)} {began}; its "
            f"{'highest' if state == 'max' else 'lowest'} before was {format_value(pre, u)}"
        )
    elif state in ("rose", "fell"):
        text = (
            f"{signal} on {inst} {state} to {format_value(observed, u)} {began}, "
            f"from {format_value(pre, u)} before{_ratio(pre, observed)}"
        )
    else:
        word = "above" if state == "above" else "below"
        text = (
            f"{signal} on {inst} at {format_value(observed, u)} {began}, {word} "
            f"{format_value(level, u)} (before: {format_value(pre, u)})"
        )
    return Evidence(
        signal=signal,
        instance=inst,
        kind="event" if state in ("event", "max", "min") else "level",
        supports=True,
        statement=text,
        window_start=onset if since is None else since,
        window_end=ctx.frame.end,
        baseline=pre,
        observed=observed,
        unit=u,
        onset=onset,
    )


def from_normal(
    ctx: Context,
    signal: str,
    inst: str,
    pre: float | None,
    post: float | None,
    wanted: Condition | None = None,
    since: float | None = None,
) -> Evidence:
    """A signal seen without the change looked for (`wanted`), or seen normal (a refutation);
    read since the incident began, or since `since`."""
    u = ctx.unit(signal)
    at = {"max": "peak ", "min": "low "}.get(wanted.stat if wanted is not None else "", "")
    figures = f"{at}{format_value(post, u)} {_since(since)}, {at}{format_value(pre, u)} before"
    if wanted is None:
        text = f"{signal} on {inst} normal: {figures}"
    else:
        what = wanted.state.replace("_", " ")
        if wanted.level is not None and wanted.state in ("trend_up", "trend_down"):
            # a trend's level is a time to exhaustion, not a reading of the signal
            what += f" running out within {format_duration(wanted.level)}"
        elif wanted.level is not None:
            what += f" {format_value(wanted.level, u)}"
        if wanted.factor is not None:
            what += f" by {wanted.factor:g}×"
        text = f"{signal} on {inst} not {what}: {figures}"
    return Evidence(
        signal=signal,
        instance=inst,
        kind="normal",
        supports=wanted is None,
        statement=text,
        # split() may point one past the last point (a window of one scrape): clamp it
        window_start=ctx.frame.times[min(ctx.split(since), ctx.frame.n - 1)]
        if ctx.frame.n
        else ctx.frame.start,
        window_end=ctx.frame.end,
        baseline=pre,
        observed=post,
        unit=u,
    )
