"""Readings the analysis can do arithmetic on: ±Inf and magnitudes no metric reaches are missing.

A sample of ±1e308 is a valid float that no exporter of a serving fleet produces (a counter
reset read as a rate, a sentinel, a corrupted file), and the detectors' differences, sums and
scales overflow on it; ±Inf (a quantile past the last histogram bucket, a division by zero in a
user's mapping) turns every statistic it enters into NaN or Inf. Such readings are read as
missing, like a gap: counted per signal, so the command that read them says so in one line, and
never silenced as warnings. Bundles keep the values as they came.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from infersight.frame import MetricFrame, SignalSeries


class ReadingLimits(BaseModel):
    """The largest magnitude read as a measurement. The field's description says why."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_abs: float = Field(
        1e30,
        gt=0,
        description="Past this magnitude a reading is missing. The largest real readings are "
        "bytes (an exabyte is 1e18), twelve orders of magnitude below; the detectors sort bands "
        "in float32 (largest 3.4e38), and their differences and scales of readings below 1e30 "
        "stay well inside it.",
    )


DEFAULT_LIMITS = ReadingLimits()


def readable(
    windows: Mapping[str, MetricFrame], limits: ReadingLimits = DEFAULT_LIMITS
) -> tuple[dict[str, MetricFrame], dict[str, int]]:
    """The windows with every reading past `limits.max_abs` (±Inf included) as NaN, and how
    many there were per signal (across the windows). Frames without one are returned as they
    are (no copy)."""
    out: dict[str, MetricFrame] = {}
    dropped: dict[str, int] = {}
    for name, frame in windows.items():
        series = dict(frame.series)
        changed = False
        for signal, s in frame.series.items():
            with np.errstate(invalid="ignore"):
                bad = np.abs(s.values) > limits.max_abs  # NaN compares False: stays a gap
            k = int(np.count_nonzero(bad))
            if not k:
                continue
            values = np.where(bad, np.nan, s.values)
            series[signal] = SignalSeries(s.instances, values)
            dropped[signal] = dropped.get(signal, 0) + k
            changed = True
        out[name] = MetricFrame(frame.start, frame.step, frame.n, series) if changed else frame
    return out, dropped


def note(dropped: Mapping[str, int], limits: ReadingLimits = DEFAULT_LIMITS) -> str:
    """One line saying which readings were read as missing ("" when none)."""
    if not dropped:
        return ""
    total = sum(dropped.values())
    names = sorted(dropped, key=lambda s: (-dropped[s], s))
    shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
    bound = f"{limits.max_abs:.0e}".replace("e+", "e")
    return (
        f"{total:,} readings ({shown}) were ±Inf or past ±{bound}, beyond any measurement: "
        "read as missing"
    )
