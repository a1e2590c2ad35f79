"""The windows an analysis reads: the incident window and the same window shifted back.

Detection compares the incident window point by point with the hour before, the same time
yesterday and last week (seed §6.1). Pulls, bundles, the simulator and the demo all name them
the same way: `incident`, `baseline-1h`, `baseline-1d`, `baseline-7d`.
"""

from __future__ import annotations

from infersight.frame import MetricFrame
from infersight.timeparse import promql_duration

INCIDENT = "incident"
DEFAULT_BASELINES: tuple[float, ...] = (3600.0, 86400.0, 7 * 86400.0)


def baseline_name(shift_s: float) -> str:
    """3600 → `baseline-1h`."""
    return f"baseline-{promql_duration(shift_s)}"


def cut_windows(
    frame: MetricFrame,
    end: float,
    length_s: float,
    shifts_s: tuple[float, ...] = DEFAULT_BASELINES,
) -> dict[str, MetricFrame]:
    """The incident window (end - length .. end) and each baseline that the frame fully covers.

    Baselines the frame does not reach are left out, so the detectors say they are unavailable
    instead of reading a half-empty window.
    """
    start = end - length_s
    if start < frame.start - 1e-6 or end > frame.end + 1e-6:
        raise ValueError(
            f"the window {start:.0f}..{end:.0f} is not inside the data {frame.start:.0f}.."
            f"{frame.end:.0f}"
        )
    out = {INCIDENT: frame.slice_time(start, end)}
    for shift in shifts_s:
        if start - shift >= frame.start - 1e-6:
            w = frame.slice_time(start - shift, end - shift)
            out[baseline_name(shift)] = MetricFrame(w.start, w.step, w.n, dict(w.series))
    return out
