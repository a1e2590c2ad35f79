"""What the users felt: the user-facing signal that moved most, its figures, and where.

The scope lists every user-facing signal read (`user_facing` in signals.yaml) and the instances
where each was anomalous. The symptom shown is what users feel: a gateway's signals first where
a gateway was read and one of them moved (its time holds the client's and every hop behind it,
so an engine's flat P99 says nothing of a gateway whose P99 doubled), else the other signals.
Within that group, the one that moved most: its largest ratio of after to before on an instance
where it was anomalous, each side taken no lower than the least change the detector counts for
that signal (`DetectConfig`'s floors: a point of error share, 5 ms), so that errors rising from
none are a move of their size, not an infinite one beside a P99 90 times its level. The figures
are the detector's own, as the diagnosis recorded them for that signal on that instance (a
finding's evidence or an unexplained change); where it recorded none, the scope's observed
value stands alone. With nothing moved, the first signal read in the same order is named as the
users' view, and said to be unmoved.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from infersight.diagnose.result import Diagnosis
from infersight.signals import UnknownSignalError, get_signal
from infersight.units import format_change, format_clock, format_ratio, format_value

#: instances named in the line before "and N more"
NAMED = 2


@dataclass(frozen=True)
class Felt:
    """The user-facing signal a report leads with."""

    signal: str
    unit: str
    #: the instances where it was anomalous (empty when nothing moved)
    where: tuple[str, ...]
    #: how many instances carry the signal
    carried: int
    #: the instance the figures are of (the one that moved most), "" when none recorded
    instance: str = ""
    baseline: float | None = None
    observed: float | None = None
    onset: float | None = None

    @property
    def moved(self) -> bool:
        return bool(self.where)

    @property
    def change(self) -> str:
        """ "989 ms → 2.44 s (2.47×)", or the side known."""
        text = format_change(self.baseline, self.observed, self.unit)
        ratio = _ratio(self.baseline, self.observed)
        shown = format_ratio(ratio) if ratio is not None and math.isfinite(ratio) else ""
        return f"{text} ({shown})" if text and shown and self.baseline else text

    def line(self) -> str:
        """ "access.request_latency_p99 989 ms → 2.44 s (2.47×) on ingress-0 since 01:06 UTC" """
        if not self.moved:
            return f"no user-facing signal moved ({self.signal} read on {_count(self.carried)})"
        figures = f" {self.change}" if self.change else ""
        on = self.instance or self.where[0]
        text = f"{self.signal}{figures} on {on}"
        if len(self.where) > 1:
            named = ", ".join(self.where[:NAMED]) + (" …" if len(self.where) > NAMED else "")
            text += f" (anomalous on {len(self.where)} of {_count(self.carried)}: {named})"
        elif self.carried > 1:
            text += f" (1 of {_count(self.carried)})"
        if self.onset is not None:
            text += f" since {format_clock(self.onset)} UTC"
        return text


def _count(n: int) -> str:
    return f"{n} instance" if n == 1 else f"{n} instances"


def _ratio(baseline: float | None, observed: float | None, floor: float = 0.0) -> float | None:
    """How many times its baseline a reading is, up or down (≥ 1), each side no lower than
    `floor`; None without both."""
    if baseline is None or observed is None:
        return None
    if not (math.isfinite(baseline) and math.isfinite(observed)):
        return None
    lo, hi = sorted((max(abs(baseline), floor), max(abs(observed), floor)))
    if lo == 0.0:
        return math.inf if hi > 0.0 else 1.0
    return hi / lo


def _floors() -> Callable[[str], float]:
    """The least change the detector counts, per signal (its own floor, else its unit's)."""
    from infersight.detect.config import DetectConfig

    cfg = DetectConfig()
    return lambda signal: cfg.signal_abs_floors.get(signal, cfg.abs_floors.get(_unit(signal), 0.0))


@dataclass(frozen=True)
class _Reading:
    baseline: float
    observed: float
    onset: float | None


def _readings(d: Diagnosis) -> Iterator[tuple[str, str, _Reading]]:
    """Every (signal, instance, figures) the diagnosis recorded with both figures."""
    for h in d.hypotheses:
        for e in h.evidence:
            if e.baseline is not None and e.observed is not None:
                yield e.signal, e.instance, _Reading(e.baseline, e.observed, e.onset)
    for u in d.unexplained:
        if u.baseline is not None and u.observed is not None:
            yield u.signal, u.instance, _Reading(u.baseline, u.observed, u.onset)


def _gateway(signal: str) -> bool:
    try:
        return get_signal(signal).part == "gateway"
    except UnknownSignalError:
        return False


def _unit(signal: str) -> str:
    try:
        return get_signal(signal).unit
    except UnknownSignalError:
        return ""


def _scope_rows(scope: Mapping[str, Any]) -> list[tuple[str, int, tuple[str, ...], Any]]:
    rows = []
    for s in scope.get("signals") or []:
        if isinstance(s, Mapping) and isinstance(s.get("signal"), str):
            count = s.get("instances")
            bad = tuple(str(i) for i in s.get("anomalous") or [])
            rows.append(
                (s["signal"], count if isinstance(count, int) else 0, bad, s.get("observed"))
            )
    return rows


def felt(d: Diagnosis) -> Felt | None:
    """The symptom to lead with; None when the scope read no user-facing signal."""
    rows = _scope_rows(d.scope)
    if not rows:
        return None
    floor = _floors()

    def size(signal: str, r: _Reading) -> float:
        return _ratio(r.baseline, r.observed, floor(signal)) or 0.0

    best: dict[tuple[str, str], _Reading] = {}
    for signal, instance, r in _readings(d):
        old = best.get((signal, instance))
        if old is None or size(signal, r) > size(signal, old):
            best[signal, instance] = r
    gateway_first = sorted(rows, key=lambda row: not _gateway(row[0]))  # stable: scope order
    anomalous = [row for row in gateway_first if row[2]]
    if not anomalous:
        signal, carried, _bad, _obs = gateway_first[0]
        return Felt(signal, _unit(signal), (), carried)
    group = [row for row in anomalous if _gateway(row[0])] or anomalous

    def top(row: tuple[str, int, tuple[str, ...], Any]) -> tuple[float, str, _Reading | None]:
        signal, _carried, bad, _obs = row
        found = [(i, best[signal, i]) for i in bad if (signal, i) in best]
        if not found:
            return 0.0, "", None
        inst, r = max(found, key=lambda ir: size(signal, ir[1]))
        return size(signal, r), inst, r

    scored = [(top(row), row) for row in group]
    (_moved, inst, reading), (signal, carried, bad, observed) = max(scored, key=lambda sr: sr[0][0])
    unit = _unit(signal)
    if reading is None:
        obs = float(observed) if isinstance(observed, int | float) else None
        return Felt(signal, unit, bad, carried, observed=obs)
    return Felt(signal, unit, bad, carried, inst, reading.baseline, reading.observed, reading.onset)


def level_text(f: Felt) -> str:
    """The figures alone, for a plot's title: "989 ms → 2.44 s (2.47×)" or "now 2.44 s"."""
    if f.baseline is None and f.observed is not None:
        return f"now {format_value(f.observed, f.unit)}"
    return f.change
