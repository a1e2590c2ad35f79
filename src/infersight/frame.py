"""MetricFrame: canonical signals on one regular time grid, an instances × time array each.

Gaps are NaN. A frame is immutable in spirit: operations return new frames and never modify
the arrays they were given (they may share them read-only).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]

#: How far back a sample still counts for a grid point, as Prometheus' default lookback.
DEFAULT_LOOKBACK_S = 300.0


@dataclass(frozen=True)
class SignalSeries:
    """One signal: a row of values per instance, on the frame's grid."""

    instances: tuple[str, ...]
    values: FloatArray  # shape (len(instances), n)

    def __post_init__(self) -> None:
        if self.values.ndim != 2 or self.values.shape[0] != len(self.instances):
            raise ValueError(
                f"values shape {self.values.shape} does not match {len(self.instances)} instances"
            )
        if len(set(self.instances)) != len(self.instances):
            raise ValueError("instances must be unique")

    def row(self, instance: str) -> FloatArray | None:
        if instance not in self.instances:
            return None
        row: FloatArray = self.values[self.instances.index(instance)]
        return row


@dataclass(frozen=True)
class MetricFrame:
    start: float
    step: float
    n: int
    series: Mapping[str, SignalSeries] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.step <= 0 or self.n < 0:
            raise ValueError(f"bad grid: step={self.step}, n={self.n}")
        for name, s in self.series.items():
            if s.values.shape[1] != self.n:
                raise ValueError(f"signal {name}: {s.values.shape[1]} points on a grid of {self.n}")

    # -- grid ---------------------------------------------------------------------------------
    @property
    def times(self) -> FloatArray:
        return self.start + self.step * np.arange(self.n, dtype=np.float64)

    @property
    def end(self) -> float:
        """Timestamp of the last grid point (start when empty)."""
        return self.start + self.step * max(self.n - 1, 0)

    def index_of(self, ts: float) -> int:
        """Grid index nearest to ts, clipped to the grid."""
        return int(np.clip(round((ts - self.start) / self.step), 0, max(self.n - 1, 0)))

    # -- contents -----------------------------------------------------------------------------
    @property
    def signals(self) -> list[str]:
        return list(self.series)

    @property
    def instances(self) -> list[str]:
        seen: dict[str, None] = {}
        for s in self.series.values():
            seen.update(dict.fromkeys(s.instances))
        return list(seen)

    def get(self, signal: str) -> SignalSeries | None:
        return self.series.get(signal)

    def __contains__(self, signal: object) -> bool:
        return signal in self.series

    def points(self) -> int:
        """Number of non-NaN values in the frame."""
        return int(sum(np.count_nonzero(~np.isnan(s.values)) for s in self.series.values()))

    # -- derivation ---------------------------------------------------------------------------
    def with_series(self, signal: str, instances: Sequence[str], values: FloatArray) -> MetricFrame:
        new = dict(self.series)
        new[signal] = SignalSeries(tuple(instances), np.asarray(values, dtype=np.float64))
        return MetricFrame(self.start, self.step, self.n, new)

    def slice_time(self, start: float, end: float) -> MetricFrame:
        """Grid points with start <= t <= end."""
        t = self.times
        idx = np.nonzero((t >= start - 1e-9) & (t <= end + 1e-9))[0]
        if idx.size == 0:
            return MetricFrame(
                start,
                self.step,
                0,
                {k: SignalSeries(v.instances, v.values[:, :0]) for k, v in self.series.items()},
            )
        lo, hi = int(idx[0]), int(idx[-1]) + 1
        return MetricFrame(
            float(t[lo]),
            self.step,
            hi - lo,
            {k: SignalSeries(v.instances, v.values[:, lo:hi]) for k, v in self.series.items()},
        )

    def select(
        self, instances: Iterable[str] | None = None, signals: Iterable[str] | None = None
    ) -> MetricFrame:
        """Keep only these instances and/or signals (missing ones are simply absent)."""
        keep_sig = set(signals) if signals is not None else None
        keep_inst = set(instances) if instances is not None else None
        out: dict[str, SignalSeries] = {}
        for name, s in self.series.items():
            if keep_sig is not None and name not in keep_sig:
                continue
            if keep_inst is None:
                out[name] = s
                continue
            rows = [i for i, inst in enumerate(s.instances) if inst in keep_inst]
            if rows:
                out[name] = SignalSeries(tuple(s.instances[i] for i in rows), s.values[rows])
        return MetricFrame(self.start, self.step, self.n, out)

    def merge(self, other: MetricFrame) -> MetricFrame:
        """Signals of both frames; the grids must agree. Other's signals win on conflict."""
        if (other.n, other.step) != (self.n, self.step) or abs(other.start - self.start) > 1e-6:
            raise ValueError("frames on different grids cannot be merged; align them first")
        return MetricFrame(self.start, self.step, self.n, {**self.series, **other.series})

    # -- long form ----------------------------------------------------------------------------
    def to_long(self) -> tuple[FloatArray, list[str], list[str], FloatArray]:
        """(ts, signal, instance, value) of every non-NaN point, signal by signal."""
        ts_parts: list[FloatArray] = []
        val_parts: list[FloatArray] = []
        sig_out: list[str] = []
        inst_out: list[str] = []
        t = self.times
        for name, s in self.series.items():
            for i, inst in enumerate(s.instances):
                row = s.values[i]
                ok = ~np.isnan(row)
                k = int(np.count_nonzero(ok))
                if k == 0:
                    continue
                ts_parts.append(t[ok])
                val_parts.append(row[ok])
                sig_out.extend([name] * k)
                inst_out.extend([inst] * k)
        ts = np.concatenate(ts_parts) if ts_parts else np.empty(0)
        vals = np.concatenate(val_parts) if val_parts else np.empty(0)
        return ts, sig_out, inst_out, vals

    @classmethod
    def from_long(
        cls,
        ts: npt.ArrayLike,
        signal: Sequence[str],
        instance: Sequence[str],
        value: npt.ArrayLike,
        start: float,
        step: float,
        n: int,
    ) -> MetricFrame:
        """Place long-form points on the grid; a point off it by more than step/2 is an error."""
        ts_a = np.asarray(ts, dtype=np.float64)
        val_a = np.asarray(value, dtype=np.float64)
        if not (len(ts_a) == len(signal) == len(instance) == len(val_a)):
            raise ValueError("long-form columns differ in length")
        pos = (ts_a - start) / step
        idx = np.rint(pos).astype(np.int64)
        if len(idx) and (np.any(np.abs(pos - idx) > 0.5 + 1e-9) or idx.min() < 0 or idx.max() >= n):
            raise ValueError("a point lies outside the frame's grid")
        keys: dict[str, dict[str, list[int]]] = {}
        for k, (sig, inst) in enumerate(zip(signal, instance, strict=True)):
            keys.setdefault(sig, {}).setdefault(inst, []).append(k)
        series: dict[str, SignalSeries] = {}
        for sig, by_inst in keys.items():
            insts = tuple(by_inst)
            arr = np.full((len(insts), n), np.nan)
            for r, inst in enumerate(insts):
                rows = np.asarray(by_inst[inst], dtype=np.int64)
                arr[r, idx[rows]] = val_a[rows]
            series[sig] = SignalSeries(insts, arr)
        return cls(start, step, n, series)


def grid(start: float, end: float, step: float) -> tuple[float, int]:
    """(start, n) of the regular grid start, start+step, … <= end."""
    if end < start:
        raise ValueError(f"end {end} is before start {start}")
    return start, int(np.floor((end - start) / step + 1e-9)) + 1


def align_samples(
    ts: npt.ArrayLike,
    values: npt.ArrayLike,
    start: float,
    step: float,
    n: int,
    lookback: float = DEFAULT_LOOKBACK_S,
) -> FloatArray:
    """Irregular samples onto the grid: at each grid point, the latest sample within `lookback`.

    This is what Prometheus does for an instant selector, so a series sampled every 10 s and one
    sampled every 60 s land on the same 15 s grid comparably. Samples must be sorted by time.
    """
    t = np.asarray(ts, dtype=np.float64)
    v = np.asarray(values, dtype=np.float64)
    out = np.full(n, np.nan)
    if t.size == 0:
        return out
    g = start + step * np.arange(n, dtype=np.float64)
    pos = np.searchsorted(t, g + 1e-9, side="right") - 1
    ok = pos >= 0
    ok[ok] &= (g[ok] - t[pos[ok]]) <= lookback
    out[ok] = v[pos[ok]]
    return out
