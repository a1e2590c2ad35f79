"""Raw samples as an exporter emitted them, before mapping to canonical signals.

Imports (text exposition, OpenMetrics, Prometheus query_range JSON) produce a RawStore; the
local PromQL evaluator reads one to compute canonical signals without a server.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

Labels = tuple[tuple[str, str], ...]  # sorted (name, value) pairs, without __name__
FloatArray = npt.NDArray[np.float64]


def labels_of(mapping: Mapping[str, str]) -> Labels:
    """Canonical, hashable label set (sorted, `__name__` dropped)."""
    return tuple(sorted((k, v) for k, v in mapping.items() if k != "__name__"))


@dataclass(frozen=True)
class RawSeries:
    name: str
    labels: Labels
    ts: FloatArray  # epoch seconds, strictly increasing
    values: FloatArray

    @property
    def label_map(self) -> dict[str, str]:
        return dict(self.labels)


class RawStore:
    """Series by (metric name, labels); samples appended in any order, sorted on first read.

    Single samples (parsers) go to Python lists, whole arrays (simulator, JSON import) are kept
    as numpy chunks; both are concatenated once when the store is read.
    """

    def __init__(self) -> None:
        self._ts: dict[tuple[str, Labels], list[float]] = {}
        self._vals: dict[tuple[str, Labels], list[float]] = {}
        self._chunks: dict[tuple[str, Labels], list[tuple[FloatArray, FloatArray]]] = {}
        self._frozen: dict[tuple[str, Labels], RawSeries] | None = None
        self._by_name: dict[str, list[RawSeries]] = {}

    def add(self, name: str, labels: Labels, ts: float, value: float) -> None:
        key = (name, labels)
        self._ts.setdefault(key, []).append(ts)
        self._vals.setdefault(key, []).append(value)
        self._frozen = None

    def add_many(self, name: str, labels: Labels, ts: npt.ArrayLike, values: npt.ArrayLike) -> None:
        t = np.asarray(ts, dtype=np.float64).ravel()
        v = np.asarray(values, dtype=np.float64).ravel()
        if t.shape != v.shape:
            raise ValueError(f"{name}: {t.size} timestamps for {v.size} values")
        if not t.size:
            return  # no samples: no series (a target that never answered)
        self._chunks.setdefault((name, labels), []).append((t, v))
        self._frozen = None

    def _keys(self) -> list[tuple[str, Labels]]:
        return list(dict.fromkeys([*self._ts, *self._chunks]))

    def _freeze(self) -> dict[tuple[str, Labels], RawSeries]:
        if self._frozen is None:
            out: dict[tuple[str, Labels], RawSeries] = {}
            for key in self._keys():
                parts = self._chunks.get(key, [])
                ts = np.concatenate(
                    [np.asarray(self._ts.get(key, []), dtype=np.float64), *(t for t, _ in parts)]
                )
                vals = np.concatenate(
                    [np.asarray(self._vals.get(key, []), dtype=np.float64), *(v for _, v in parts)]
                )
                order = np.argsort(ts, kind="stable")
                ts, vals = ts[order], vals[order]
                # a repeated timestamp keeps its last value, as a re-scrape would
                keep = np.append(ts[1:] != ts[:-1], True)
                out[key] = RawSeries(key[0], key[1], ts[keep], vals[keep])
            self._frozen = out
            self._by_name = {}
            for s in out.values():
                self._by_name.setdefault(s.name, []).append(s)
        return self._frozen

    def __iter__(self) -> Iterator[RawSeries]:
        return iter(self._freeze().values())

    def __len__(self) -> int:
        return len(self._keys())

    def names(self) -> set[str]:
        return {name for name, _ in self._keys()}

    def series(self, name: str) -> list[RawSeries]:
        self._freeze()
        return list(self._by_name.get(name, ()))

    def time_range(self) -> tuple[float, float] | None:
        """(first, last) sample time over all series, None when empty."""
        spans = [(s.ts[0], s.ts[-1]) for s in self if s.ts.size]
        if not spans:
            return None
        return float(min(a for a, _ in spans)), float(max(b for _, b in spans))
