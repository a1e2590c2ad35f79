"""Grounds for an all-clear: "nothing is wrong" is a claim, and it needs evidence of its own.

A finding stands on whatever shows it: a change inside the window against its own first minutes,
an instance apart from its peers, a level past a vendor's mark, a change against yesterday. An
all-clear is stronger: it says an incident would have shown, and it did not. The rule, the least
that makes that claim honest:

1. The window holds two time points or more. One scrape compares with nothing.
2. At least one hypothesis was decided on the data (confirmed or refuted). When every one is
   inconclusive (each needs signals the data lacks), "no failure mode confirmed" only means that
   none could be checked.
3. The readings were compared with the past from outside the stretch they describe: a baseline
   window (the hour before, yesterday, last week) holding a reading of a signal on an instance
   the window reads too, or the window's own hour or day before when it is long enough to hold
   one (detection's `self-1h`, `self-1d`). The window's own first minutes, the peers and vendor
   levels are evidence for a finding, never for an all-clear: an incident already under way
   when the window began reads as steady against its first minutes, the same on every peer
   (a slow vector DB slows every replica alike), and latency, throughput or a queue have no
   vendor level. So a quiet hour with no baseline cannot be told from an hour inside an incident
   that began earlier (a capture with `--baselines none` half an hour into one), and both are
   answered "cannot judge", with what to capture instead.

4. The window reads up to its end. A window whose series all stopped (or turned to NaN) minutes
   before it ended says nothing of those minutes: a fleet that stopped answering reads as calm.
5. Nothing the users feel is already wrong on its own terms, whatever the baselines say: a share
   of failing requests past `GroundsConfig.clear_max_error_ratio`, or a user-facing latency that
   moved `clear_max_shift`× within the window against its own first minutes; nor anything
   detection finds as strong as `DiagnoseConfig.unhealthy_shift` in the window against its own
   first minutes (`changed_within`, asked of the engine's all-clears). Baselines that hold the
   same (an outage older than them, one that recurs at the same hour) compare it with itself.

Where a rule fails the answer is "cannot judge" (`judged: false`, `healthy: false`, exit 3), its
summary naming each rule that failed and what to do. A diagnosis that names a cause or a change is
never turned into "cannot judge": the rules bind only the all-clear.

Detection's own all-clear ("no anomaly") takes rules 1 and 3: it checks no hypotheses.
"""

from __future__ import annotations

import time
from collections.abc import Mapping

import numpy as np
from pydantic import BaseModel, Field

from infersight.detect.baseline import STANDARD_BASELINES, align_rows, derivable
from infersight.detect.config import DetectConfig
from infersight.frame import MetricFrame
from infersight.signals import all_signals
from infersight.units import format_duration, format_ratio, format_value
from infersight.windows import INCIDENT

#: what to do when no baseline is in the data
GET_BASELINES = (
    "capture or pull with baselines (`--baselines 1h`, or the default 1h,1d,7d), or a window "
    "that starts well before the incident"
)


class GroundsConfig(BaseModel):
    """What an all-clear needs of the window itself (rules 4 and 5)."""

    clear_tail_s: float = Field(
        300.0,
        gt=0,
        description="A series with no finite reading in this last stretch of the window has "
        "stopped: Prometheus's own staleness lookback (5 min) is how long a sample stands for "
        "its series, so a target that still answers has a reading within it.",
    )
    clear_max_error_ratio: float = Field(
        0.05,
        gt=0,
        le=1,
        description="A user-facing error ratio at or past this (one request in 20 failing) breaks "
        "any availability objective of 95% or more: never healthy, whatever the baselines hold.",
    )
    clear_max_shift: float = Field(
        3.0,
        gt=1,
        description="A user-facing latency whose median over the last `clear_tail_s` is this "
        "many times its median over the window's first `clear_tail_s` (or a third of it) moved "
        "within the window: the 3× a tail latency takes to break a typical SLO's headroom.",
    )


def points_upto(frame: MetricFrame, at: float | None) -> int:
    """Points of `frame` up to `at` (all when None), as the engine cuts the window there."""
    if at is None or at >= frame.end:
        return frame.n
    return frame.index_of(at) + 1 if at >= frame.start else 0


def references(windows: Mapping[str, MetricFrame], at: float | None = None) -> tuple[str, ...]:
    """The references from outside the stretch they are compared with that hold a reading of a
    signal on an instance the incident window reads too (up to `at`): the baseline windows given
    (on the incident's step, as detection takes them) and the lags the window holds itself."""
    inc = windows.get(INCIDENT)
    if inc is None:
        return ()
    n = points_upto(inc, at)
    rows = {
        name: (s.instances, ok)
        for name, s in inc.series.items()
        if (ok := np.isfinite(s.values[:, :n])).any()
    }
    found: list[str] = []
    for name, frame in windows.items():
        if name == INCIDENT or abs(frame.step - inc.step) > 1e-9 or frame.n == 0:
            continue
        for signal, (instances, ok) in rows.items():
            ref = align_rows(frame.get(signal), instances, n)
            if np.any(ok.any(axis=1) & np.isfinite(ref).any(axis=1)):
                found.append(name)
                break
    if DetectConfig().derive_from_incident:
        for name, lag in STANDARD_BASELINES.items():
            k = round(lag / inc.step)
            if name in windows or not derivable(name, inc) or k >= n:
                continue
            if any(np.any(ok[:, k:] & ok[:, : n - k]) for _, ok in rows.values()):
                found.append("self-" + name.split("-", 1)[1])
    return tuple(found)


def _medians(row: np.ndarray) -> float:
    ok = row[np.isfinite(row)]
    return float(np.median(ok)) if ok.size else float("nan")


def window_doubts(
    frame: MetricFrame,
    at: float | None,
    user_facing: tuple[str, ...],
    cfg: GroundsConfig | None = None,
) -> tuple[str, ...]:
    """Why the window itself cannot ground an all-clear (rules 4 and 5): empty when it can."""
    cfg = cfg or GroundsConfig()
    n = points_upto(frame, at)
    tail = max(1, round(cfg.clear_tail_s / frame.step))
    if n < 2 * tail + 1:
        return ()
    read = {name: s.values[:, :n] for name, s in frame.series.items()}
    read = {k: v for k, v in read.items() if np.isfinite(v[:, : n - tail]).any()}
    if not read:
        return ()
    faced = [k for k in user_facing if k in read] or list(read)
    gone = [k for k in faced if not np.isfinite(read[k][:, n - tail :]).any()]
    doubts: list[str] = []
    if len(gone) == len(faced):
        since = time.strftime("%H:%M UTC", time.gmtime(frame.times[n - tail]))
        names = ", ".join(gone[:3]) + (" …" if len(gone) > 3 else "")
        doubts.append(
            f"no reading in the window's last {format_duration(cfg.clear_tail_s)} from {names} "
            f"(every one that read before; since {since}): the targets stopped answering or the "
            "data was cut, and a silent fleet reads as calm; capture again, or diagnose at the "
            "last time with data (`--at`)"
        )
    known = all_signals()
    for name in faced:
        sig = known.get(name)
        s = frame.get(name)
        if sig is None or s is None or name in gone:
            continue
        for i, inst in enumerate(s.instances):
            row = s.values[i, :n]
            late, early = _medians(row[n - tail :]), _medians(row[:tail])
            if sig.unit == "ratio" and sig.facet == "errors" and late >= cfg.clear_max_error_ratio:
                doubts.append(
                    f"{name} on {inst} at {format_value(late, 'ratio')} at the window's end: "
                    "that many failing requests is no health, whatever the baselines hold"
                )
                break
            if sig.unit == "s" and early > 0 and late > 0:
                shift = late / early
                if shift >= cfg.clear_max_shift or shift <= 1 / cfg.clear_max_shift:
                    doubts.append(
                        f"{name} on {inst} moved {format_ratio(shift)} within the window (its "
                        "last minutes against its first) while its baselines show the same: "
                        "they hold the incident itself (an outage older than them, or one "
                        "that recurs at that hour); pull baselines from before it"
                    )
                    break
    return tuple(doubts)


def changed_within(frame: MetricFrame, at: float | None, least: float) -> str:
    """Why an all-clear made against baselines is contradicted by the window itself ("" when it
    is not): detection run on the window alone, against its own first minutes, finds a change
    of `least` or more. Baselines that hold the same incident (an outage older than them, one
    that recurs at that hour) compare it with itself; the window's own start does not."""
    from infersight.detect import detect

    found = [a for a in detect({INCIDENT: frame}, at=at).anomalies if a.score >= least]
    if not found:
        return ""
    top = max(found, key=lambda a: a.score)
    return (
        f"{top.signal} on {top.instance} changed within the window against its own first "
        f"minutes ({len(found)} change{'s' if len(found) > 1 else ''} as strong), while its "
        "baselines show the same: they may hold the incident itself; pull baselines from before "
        "it (`--baselines`), or a window that starts before it"
    )


def _no_baseline(span_s: float) -> str:
    return (
        "no baseline to compare with (the hour before, yesterday, last week): an incident under "
        f"way since before the {format_duration(span_s)} window began reads as steady within "
        f"it; {GET_BASELINES}"
    )


def _one_point() -> str:
    return (
        "the window holds one time point (one scrape), which compares with nothing; import "
        "several scrapes (`--interval`) or pull a window"
    )


def why_not_clear(
    points: int,
    refs: tuple[str, ...],
    span_s: float,
    decided: int,
    undecided: int,
    doubts: tuple[str, ...] = (),
) -> str:
    """Why an all-clear of the diagnosis cannot stand ("" when it can): the rules above, each
    that fails. `decided`/`undecided`: hypotheses confirmed or refuted / left inconclusive."""
    if points < 2:
        return _one_point()
    why: list[str] = []
    if decided == 0:
        why.append(
            f"no failure mode could be checked (all {undecided} need signals this data lacks; "
            "`infersight signals` shows who provides each, `infersight detect` what changed)"
        )
    if not refs:
        why.append(_no_baseline(span_s))
    why += doubts
    return "; ".join(why)


def why_no_anomaly_is_not_clear(
    points: int, refs: tuple[str, ...], span_s: float, doubts: tuple[str, ...] = ()
) -> str:
    """Why detection's "no anomaly" cannot stand for a verdict ("" when it can): rules 1, 3, 4
    and 5."""
    if points < 2:
        return _one_point()
    return "; ".join(([] if refs else [_no_baseline(span_s)]) + list(doubts))
