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

Where a rule fails the answer is "cannot judge" (`judged: false`, `healthy: false`, exit 3), its
summary naming each rule that failed and what to do. A diagnosis that names a cause or a change is
never turned into "cannot judge": the rules bind only the all-clear.

Detection's own all-clear ("no anomaly") takes rules 1 and 3: it checks no hypotheses.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from infersight.detect.baseline import STANDARD_BASELINES, align_rows, derivable
from infersight.detect.config import DetectConfig
from infersight.frame import MetricFrame
from infersight.units import format_duration
from infersight.windows import INCIDENT

#: what to do when no baseline is in the data
GET_BASELINES = (
    "capture or pull with baselines (`--baselines 1h`, or the default 1h,1d,7d), or a window "
    "that starts well before the incident"
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
    points: int, refs: tuple[str, ...], span_s: float, decided: int, undecided: int
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
    return "; ".join(why)


def why_no_anomaly_is_not_clear(points: int, refs: tuple[str, ...], span_s: float) -> str:
    """Why detection's "no anomaly" cannot stand for a verdict ("" when it can): rules 1 and 3."""
    if points < 2:
        return _one_point()
    return "" if refs else _no_baseline(span_s)
