"""How many requests a card holds, estimated from the incident window's own data (seed §3.3).

The seed sizes a worker pool from the GPU: with V the VRAM left for requests and M the VRAM one
in-flight request takes, the card runs about V/M requests at once. Both are read off one
instance's samples: VRAM in use against the work in flight (the engine's running requests, or
the pool's busy ratio × its configured size) is a line whose slope is M and whose intercept is
what does not depend on load (weights, runtime, cache pools). The fit is Theil–Sen (the median
of the pairwise slopes), so bursts, OOM crashes and a handful of odd samples do not move it;
samples where VRAM is pinned at the card's size (clipped by an OOM) or the process is down are
left out. The card's size is VRAM in use over its ratio of the card.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from infersight.diagnose.config import DEFAULT_CONFIG, DiagnoseConfig
from infersight.frame import FloatArray

GIB = float(2**30)


@dataclass(frozen=True)
class Capacity:
    """One instance's estimate: bytes, requests, and the configured limit it is set against."""

    card: float  # the card's VRAM (bytes)
    fixed: float  # VRAM held whatever the load (fitted intercept: weights, runtime), bytes
    per_request: float  # M: VRAM per in-flight request (fitted slope), bytes
    usable_share: float  # share of the card the limit is held against (1.0: the whole card)
    limit: float  # the configured concurrency limit (latest value)
    points: int  # samples the fit used
    #: the share of the card the recommended pool size is held against (headroom kept)
    recommended_share: float = DEFAULT_CONFIG.capacity_recommended_share

    def free(self, share: float | None = None) -> float:
        """V: `share` of the card (default `usable_share`) less what is held whatever the load."""
        use = self.usable_share if share is None else share
        return max(use * self.card - self.fixed, 0.0)

    def safe(self, share: float | None = None) -> float:
        """About how many requests the card holds at once: V/M."""
        return self.free(share) / self.per_request

    def recommended(self) -> int:
        """The pool to set: V/M with the recommended headroom, rounded down, never 0 (the
        arithmetic is `infersight.capacity`'s, the same `capacity concurrency` shows)."""
        from infersight.capacity.concurrency import concurrent

        return concurrent(self.card, self.per_request, self.fixed, 1.0 - self.recommended_share)[2]

    def over(self, factor: float) -> bool:
        """The limit admits more than `factor` × what the card holds."""
        return self.limit > factor * self.safe()

    def statement(self, inst: str, factor: float) -> str:
        over = self.limit / self.safe() if self.safe() > 0 else float("inf")
        where = "the card" if self.usable_share >= 1.0 else f"{self.usable_share:.0%} of the card"
        rec = self.recommended()
        return (
            f"service.concurrency_limit on {inst} is {self.limit:.0f} where {where} holds about "
            f"{self.safe():.0f} requests (V/M: {self.free() / GIB:.1f} GiB / "
            f"{self.per_request / GIB:.2f} GiB per request; card {self.card / GIB:.0f} GiB, "
            f"{self.fixed / GIB:.1f} GiB held whatever the load; fit on {self.points} samples): "
            f"{over:.1f}× it, margin {factor:g}×; set it to {rec} (V/M with "
            f"{1.0 - self.recommended_share:.0%} headroom, rounded down)"
        )


def theil_sen(
    x: FloatArray, y: FloatArray, max_points: int = DEFAULT_CONFIG.capacity_max_points
) -> tuple[float, float]:
    """(slope, intercept): the median pairwise slope, the median residual intercept; the
    pairs of at most `max_points` samples evenly spread (the fit is quadratic)."""
    if x.size > max_points:
        keep = np.linspace(0, x.size - 1, max_points).astype(int)
        x, y = x[keep], y[keep]
    i, j = np.triu_indices(x.size, 1)
    dx, dy = x[j] - x[i], y[j] - y[i]
    ok = dx != 0
    if not np.any(ok):
        return float("nan"), float("nan")
    slope = float(np.median(dy[ok] / dx[ok]))
    return slope, float(np.median(y - slope * x))


def estimate(
    used: FloatArray | None,
    ratio: FloatArray | None,
    in_flight: FloatArray | None,
    limit: FloatArray | None,
    usable_share: float,
    config: DiagnoseConfig = DEFAULT_CONFIG,
) -> Capacity | None:
    """The card's concurrency on one instance, or None when the data cannot say: a series
    missing, too few samples, in-flight work that never moved, or a slope that is not positive.

    used: VRAM in use (bytes); ratio: the same as a share of the card; in_flight: requests in
    flight per sample; limit: the configured concurrency limit per sample; config: the fit's
    thresholds (`capacity_*`).
    """
    if used is None or ratio is None or in_flight is None or limit is None:
        return None
    lim = limit[~np.isnan(limit)]
    if lim.size == 0:
        return None
    with np.errstate(invalid="ignore", divide="ignore"):
        up = ~np.isnan(used) & ~np.isnan(ratio) & (ratio > config.capacity_down)
        if not np.any(up):
            return None
        card = float(np.median(used[up] / ratio[up]))
        ok = up & (ratio < config.capacity_clipped) & ~np.isnan(in_flight)
    x, y = in_flight[ok], used[ok]
    too_few = x.size < config.capacity_min_points
    if too_few or float(np.ptp(x)) < config.capacity_min_spread or card <= 0:
        return None
    slope, fixed = theil_sen(x, y, config.capacity_max_points)
    if not np.isfinite(slope) or slope <= 0:
        return None
    recommended = config.capacity_recommended_share
    return Capacity(card, fixed, slope, usable_share, float(lim[-1]), int(x.size), recommended)
