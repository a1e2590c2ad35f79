"""Per-step latency distributions, from the components a request pays.

A request's end-to-end time is the sum of: CPU work, queue wait, batch wait, its batch's run,
the cache and (on a miss) the vector DB, a hot-key load, a GC pause, a TCP retransmission
timeout, a log write. Each component is drawn from K stratified quantiles (the same draws
every step, so percentiles move only when the system does); the sums are sorted and kept at
a fixed set of levels: a quantile table per step and instance, from which both the canonical
P50/P99 and the exporters' histogram buckets are read.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from infersight.lab.sim.config import FleetConfig
from infersight.lab.sim.deps import FAULT_SIGMA, RESIDENT_SIGMA
from infersight.lab.sim.drivers import FloatArray
from infersight.lab.sim.infra import RTO_MIN_S
from infersight.lab.sim.model import Trace

K = 256
#: sorted-sample positions kept: dense in the tail, where P99 lives
KEEP = np.array(
    [0, 6, 13, 26, 38, 51, 64, 77, 90, 102, 115, 128, 141, 154, 166, 179, 192, 205, 218, 224,
     230, 236, 240, 243, 246, 248, 250, 251, 252, 253, 254, 255]
)  # fmt: skip
LEVELS = (KEEP + 0.5) / K
#: probability mass each kept level stands for (midpoint rule)
_EDGES = np.concatenate([[0.0], 0.5 * (LEVELS[1:] + LEVELS[:-1]), [1.0]])
MASS = np.diff(_EDGES)
CHUNK = 128


@dataclass(frozen=True)
class Draws:
    u: dict[str, FloatArray]
    z: dict[str, FloatArray]


def make_draws(rng: np.random.Generator) -> Draws:
    strata = (np.arange(K) + 0.5) / K
    ref = np.sort(rng.standard_normal(50_000))
    z_strata = ref[(strata * ref.size).astype(np.int64)]
    u = {
        k: strata[rng.permutation(K)]
        for k in ("q", "f", "m", "pf", "h", "h2", "g", "g2", "n", "n2")
    }
    z = {k: z_strata[rng.permutation(K)] for k in ("f", "v")}
    return Draws(u, z)


def quantile_at(table: Table, p: float) -> FloatArray:
    """Interpolate a quantile table (..., len(LEVELS)) at probability p."""
    j = int(np.clip(np.searchsorted(LEVELS, p) - 1, 0, LEVELS.size - 2))
    w = (p - LEVELS[j]) / (LEVELS[j + 1] - LEVELS[j])
    out: FloatArray = table[..., j] * (1.0 - w) + table[..., j + 1] * w
    return out


def cdf_at(table: Table, edges: FloatArray) -> FloatArray:
    """Share of requests at or below each edge: (..., L) table → (..., len(edges))."""
    # one pass per edge: a (..., L, edges) temporary is hundreds of MB for a day of one host
    out: FloatArray = np.empty((*table.shape[:-1], len(edges)))
    for b, edge in enumerate(edges):
        out[..., b] = (table <= edge) @ MASS
    return out


def _vector_samples(tr: Trace, d: Draws, lo: int, hi: int) -> FloatArray:
    f = tr.fleet
    fault = d.u["pf"] < f["p_fault"][lo:hi, None]
    res = f["resident_median"][lo:hi, None] * np.exp(RESIDENT_SIGMA * d.z["v"])
    slow = f["fault_median"][lo:hi, None] * np.exp(FAULT_SIGMA * d.z["v"])
    out: FloatArray = np.where(fault, slow, res)
    return out


def vector_table(tr: Trace, d: Draws) -> FloatArray:
    """(n, L) server-side vector search time."""
    n = tr.fleet["hit"].size
    out = np.empty((n, KEEP.size))
    for lo in range(0, n, CHUNK * 8):
        hi = min(n, lo + CHUNK * 8)
        out[lo:hi] = np.sort(_vector_samples(tr, d, lo, hi), axis=-1)[:, KEEP]
    return out


#: a table kept in float32 (see `e2e_table`)
Float32Array = npt.NDArray[np.float32]
#: a quantile table in either precision
Table = npt.NDArray[np.floating[Any]]


def e2e_table(tr: Trace, cfg: FleetConfig, d: Draws) -> Float32Array:
    """(n, N, L) end-to-end request time per step and instance."""
    inst, fl = tr.inst, tr.fleet
    n, m = inst["queue_wait"].shape
    # float32: request times in seconds need no more than its 7 digits, and this table is the
    # run's largest array after the trace (a thousand instances for a day: 3 GB in float64)
    out = np.full((n, m, KEEP.size), np.nan, dtype=np.float32)
    sig = cfg.forward_sigma
    for lo in range(0, n, CHUNK):
        hi = min(n, lo + CHUNK)

        def col(name: str, lo: int = lo, hi: int = hi) -> FloatArray:
            a: FloatArray = inst[name][lo:hi, :, None]
            return a

        def fcol(name: str, lo: int = lo, hi: int = hi) -> FloatArray:
            a: FloatArray = fl[name][lo:hi, None, None]
            return a

        vec = _vector_samples(tr, d, lo, hi)[:, None, :]
        miss = d.u["m"] >= fcol("hit")
        total = (
            cfg.cpu_per_request_s * col("cpu_stretch")
            + col("queue_wait") * (0.7 + 0.6 * d.u["q"])
            + col("batch_wait_max") * d.u["f"]
            + col("batch_s") * np.exp(sig * d.z["f"] - 0.5 * sig * sig)
            + fcol("cache_cmd")
            + miss * cfg.vector_queries_per_miss * vec
            + (d.u["h"] < cfg.hot_key_share * fcol("hot_missing")) * fcol("hot_wait") * d.u["h2"]
            + (d.u["g"] < np.minimum(1.0, col("gc_rate") * (col("service_s") + col("gc_pause_s"))))
            * col("gc_pause_s")
            * d.u["g2"]
            + (d.u["n"] < col("p_net_stall")) * RTO_MIN_S * (1.0 + d.u["n2"])
            + col("disk_stall")
        )
        out[lo:hi] = np.sort(total, axis=-1)[..., KEEP]
    return out


def fleet_quantile(table: Table, weight: FloatArray, p: float) -> FloatArray:
    """Quantile of the traffic-weighted mixture of instances: (n, N, L), (n, N) → (n,)."""
    n = table.shape[0]
    vals = table.reshape(n, -1)
    w = (weight[:, :, None] * MASS).reshape(n, -1)
    ok = np.isfinite(vals)
    vals = np.where(ok, vals, np.inf)
    w = np.where(ok, w, 0.0)
    order = np.argsort(vals, axis=1)
    v_sorted = np.take_along_axis(vals, order, axis=1)
    cw = np.cumsum(np.take_along_axis(w, order, axis=1), axis=1)
    tot = cw[:, -1:]
    idx = np.argmax(cw >= p * tot, axis=1)
    out: FloatArray = np.where(tot[:, 0] > 0, v_sorted[np.arange(n), idx], np.nan)
    return out
