"""When an alert is diagnosed, and over which window: one answer for `serve` and `diagnose --alert`.

An alert fires after its `for:` (Prometheus sends the moment it began firing as `startsAt`), so
the onset lies up to a `for:` before `startsAt` and the incident runs on past it: diagnosed at
`startsAt`, the window ends where the incident begins (at the onset itself, the 02:17 incident
read "nothing is wrong" and a minute later named the vector DB). So the moment diagnosed is when
the alert arrives (`serve`: when its notification came; `diagnose --alert`: now, `--at`, or a
bundle's newest data), and the window ending there reaches back `lead_s` past `startsAt`, so the
onset and a stretch before it lie inside.
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field


class AlertTiming(BaseModel):
    """How far an alert's window reaches back. Each field's description says why."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    lead_s: float = Field(
        1200.0,
        gt=0,
        description="How far before startsAt the window begins at least. The longest `for:` of "
        "the paging alerts `infersight alerts render` writes is 15 min (VRAM filling, the SLO's "
        "6 h burn), so the onset can precede startsAt by that much; 5 more minutes give the "
        "detectors a stretch before the onset to set it against.",
    )
    max_span_s: float = Field(
        6 * 3600.0,
        gt=0,
        description="The longest window stretched back to reach an old startsAt (a group re-sent "
        "hours into an incident, a saved alert read later): 1,440 points per series at 15 s, "
        "well inside the grid limits; the baselines are the same span an hour, a day and a week "
        "earlier, so a longer one mostly costs time.",
    )


@dataclass(frozen=True)
class AlertWindow:
    """The moment diagnosed and the window ending there, for an alert that began at `starts_at`."""

    starts_at: float
    at: float  # the moment diagnosed; the window ends here
    span_s: float  # the window's length
    lead_s: float  # how far before starts_at it was meant to begin

    @property
    def start(self) -> float:
        return self.at - self.span_s

    @property
    def reaches(self) -> bool:
        """Whether the window begins `lead_s` before the alert (False when capped)."""
        return self.start <= min(self.starts_at, self.at) - self.lead_s + 1e-6


def alert_window(
    starts_at: float, arrived: float, window_s: float, timing: AlertTiming | None = None
) -> AlertWindow:
    """The window to diagnose an alert in: ending when it arrived, at least `window_s` long,
    reaching `lead_s` before `starts_at` (a startsAt after `arrived`, a sender's clock ahead of
    ours, counts as `arrived`), at most `max_span_s` (or `window_s` when that is longer)."""
    t = timing or AlertTiming()
    begun = min(starts_at, arrived)
    span = max(window_s, arrived - begun + t.lead_s)
    span = min(span, max(window_s, t.max_span_s))
    return AlertWindow(starts_at, arrived, span, t.lead_s)
