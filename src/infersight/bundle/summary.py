"""A short account of a bundle: what it covers and what it lacks, for `infersight inspect`."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from infersight.bundle.read import Bundle
from infersight.signals import Layer, all_signals


@dataclass(frozen=True)
class WindowSummary:
    name: str
    start: float
    end: float
    step: float
    grid_points: int  # points of the time grid
    points: int  # values stored (non-NaN), all signals and instances


@dataclass(frozen=True)
class BundleSummary:
    path: str
    file_size: int
    created_at: str
    source: dict[str, str]
    windows: tuple[WindowSummary, ...]
    signal_count: int
    instance_count: int
    signals_per_layer: dict[str, int]  # every layer, in the seed's order, 0 when none
    missing: dict[str, str]
    artifacts: dict[str, int]  # name -> size in bytes
    notes: str | None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def summarize(bundle: Bundle) -> BundleSummary:
    m = bundle.manifest
    catalog = all_signals()
    per_layer = {layer.value: 0 for layer in Layer}
    for s in m.signals:
        per_layer[catalog[s].layer.value] += 1
    windows = tuple(
        WindowSummary(name, spec.start, spec.end, spec.step, spec.n, bundle.windows[name].points())
        for name, spec in m.windows.items()
    )
    return BundleSummary(
        path=str(bundle.path),
        file_size=bundle.size,
        created_at=m.created_at.isoformat().replace("+00:00", "Z"),
        source=dict(m.source),
        windows=windows,
        signal_count=len(m.signals),
        instance_count=len(m.instances),
        signals_per_layer=per_layer,
        missing=dict(m.missing),
        artifacts={n: len(bundle.read_artifact(n)) for n in bundle.artifact_names()},
        notes=m.notes,
    )
