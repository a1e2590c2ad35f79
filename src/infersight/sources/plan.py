"""Which exporter family computes each canonical signal, given the metric names at hand.

Shared by the live pull (names from the server) and the local path (names in a RawStore): a
signal is available when a detected family has an alternative whose metrics all exist;
otherwise it is unavailable with the reason, never assumed healthy.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from infersight.exporters import Catalog, Family, SignalMapping
from infersight.signals import all_signals, get_signal


@dataclass(frozen=True)
class SignalPlan:
    """How one signal would be computed: every detected family able to provide it, best first."""

    signal: str
    mappings: tuple[SignalMapping, ...]
    reason: str = ""  # why it is unavailable, when mappings is empty

    @property
    def available(self) -> bool:
        return bool(self.mappings)


def _why_missing(signal: str, catalog: Catalog, present: list[Family], names: set[str]) -> str:
    partial = []
    for fam in present:
        alts = fam.mappings.get(signal, ())
        if alts:
            lacking = sorted(alts[0].metrics - names)
            partial.append(f"{fam.name} present but {', '.join(lacking)} missing")
    if partial:
        return "; ".join(partial)
    known = [f.name for f in catalog.ordered() if signal in f.mappings]
    if known:
        return f"no exporter found that provides it (known from: {', '.join(known)})"
    return "no exporter family in the catalog maps it"


def plan_signals(
    catalog: Catalog, names: set[str], signals: Iterable[str] | None = None
) -> dict[str, SignalPlan]:
    """Per signal (all canonical ones by default, in layer order): who provides it, or why not."""
    present = catalog.detect(names)
    wanted = list(all_signals()) if signals is None else [get_signal(s).name for s in signals]
    out: dict[str, SignalPlan] = {}
    for sig in wanted:
        picks = tuple(m for f in present if (m := f.pick(sig, names)) is not None)
        reason = "" if picks else _why_missing(sig, catalog, present, names)
        out[sig] = SignalPlan(sig, picks, reason)
    return out
