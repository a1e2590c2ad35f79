"""Writing a run into a RawStore the way exporters expose it: gauges, counters, histograms.

Counters are cumulative and reset to zero when the process that owns them restarts: the new
process starts from zero. A target that is down has no samples (and `up` 0). Histograms are
cumulative `_bucket{le}` / `_sum` / `_count` built from the per-step quantile tables at the
exporter's own bucket boundaries.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from infersight.lab.sim.drivers import FloatArray
from infersight.lab.sim.latency import LEVELS, MASS, Table, cdf_at
from infersight.sources.raw import RawStore, labels_of


def geometric(start: float, factor: float, count: int) -> tuple[float, ...]:
    return tuple(float(start * factor**i) for i in range(count))


def fmt_le(le: float) -> str:
    return "+Inf" if np.isinf(le) else repr(float(le))


class Target:
    """One scrape target: its labels, the grid, and which steps it answered."""

    def __init__(
        self,
        store: RawStore,
        ts: FloatArray,
        job: str,
        instance: str,
        alive: FloatArray | None = None,
        epoch: FloatArray | None = None,
        **extra: str,
    ) -> None:
        self.store, self.ts = store, ts
        self.base = {"job": job, "instance": instance, **extra}
        self.alive = np.ones(ts.size, dtype=bool) if alive is None else alive > 0
        # counter resets: the generation (restart count) of the process that ran in each step
        self.epoch = np.zeros(ts.size) if epoch is None else epoch
        store.add_many("up", labels_of({"job": job, "instance": instance}), ts, self.alive * 1.0)

    def _put(self, name: str, labels: dict[str, str], values: FloatArray) -> None:
        ok = self.alive & np.isfinite(values)
        lab = labels_of({**self.base, **labels})
        self.store.add_many(name, lab, self.ts[ok], values[ok])

    def gauge(self, name: str, values: FloatArray, **labels: str) -> None:
        self._put(name, labels, np.asarray(values, dtype=np.float64))

    def counter(self, name: str, per_step: FloatArray, **labels: str) -> None:
        """`per_step`: increase during each step (the sample at step t includes it)."""
        self._put(name, labels, self.cumulate(np.nan_to_num(per_step)))

    def cumulate(self, inc: FloatArray) -> FloatArray:
        c = np.cumsum(inc)
        change = np.flatnonzero(np.diff(self.epoch) != 0) + 1
        if change.size == 0:
            out: FloatArray = c
            return out
        base = np.zeros(inc.size)
        base[change] = c[change - 1]
        out = c - np.maximum.accumulate(base)
        return out

    def histogram(
        self,
        name: str,
        table: Table,
        count_per_step: FloatArray,
        edges: Sequence[float],
        labels: Mapping[str, str] | None = None,
        scale: float = 1.0,
    ) -> None:
        """table: (n, L) quantiles (seconds); scale converts to the exporter's unit (1000: ms)."""
        lab = dict(labels or {})
        tab = np.nan_to_num(table * scale, nan=np.inf)
        cnt = np.where(np.isfinite(tab[:, 0]), np.nan_to_num(count_per_step), 0.0)
        e = np.asarray(edges, dtype=np.float64)
        frac = cdf_at(tab, e)  # (n, B)
        for j, le in enumerate(e):
            self.counter(f"{name}_bucket", cnt * frac[:, j], le=fmt_le(le), **lab)
        self.counter(f"{name}_bucket", cnt, le="+Inf", **lab)
        mean = np.where(np.isfinite(tab), tab, 0.0) @ MASS
        self.counter(f"{name}_sum", cnt * mean, **lab)
        self.counter(f"{name}_count", cnt, **lab)


def uniform_table(upper: FloatArray) -> FloatArray:
    """Quantile table of U(0, upper) per step."""
    out: FloatArray = upper[:, None] * LEVELS
    return out


def lognormal_table(median: FloatArray, sigma: float, z: FloatArray) -> FloatArray:
    out: FloatArray = median[:, None] * np.exp(sigma * z)
    return out


def exponential_table(mean: FloatArray) -> FloatArray:
    out: FloatArray = -mean[:, None] * np.log1p(-LEVELS)
    return out


#: standard normal quantiles at LEVELS (for lognormal tables)
Z_LEVELS: FloatArray = np.quantile(
    np.random.default_rng(0).standard_normal(400_000), LEVELS
).astype(np.float64)
