"""The knee of a throughput curve: where more batch (or concurrency) stops buying throughput.

Kneedle (Satopää et al., 2011, through `kneed`) on a cleaned curve. Load tests are noisy: a
step a few percent high or low would move the knee, and a dip past saturation (contention,
a queue that times out) is not a second rise. So the curve is first smoothed by a running
median of three (one outlier step cannot move it) and then made non-decreasing (a dip past
saturation reads as flat). A knee counts only when the curve past it is flat: from the knee to
the last step throughput grows at most as x^`flat_elasticity` (it grows about as x below a
knee); otherwise the sweep never reached saturation and the answer is to sweep further.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from infersight.capacity.config import DEFAULT_CONFIG, CapacityConfig
from infersight.capacity.results import Sweep


@dataclass(frozen=True)
class Knee:
    """A knee (x, throughput there) or None with the reason; the smoothed curve it used."""

    x: float | None
    throughput: float | None
    smoothed: tuple[float, ...]
    reason: str  # why this answer: the knee's evidence, or why there is none

    @property
    def found(self) -> bool:
        return self.x is not None

    def to_dict(self) -> dict[str, Any]:
        return {
            "x": self.x,
            "throughput": self.throughput,
            "smoothed": list(self.smoothed),
            "reason": self.reason,
        }


def smooth(ys: list[float]) -> list[float]:
    """Running median of three (ends kept), then the running maximum."""
    a = np.asarray(ys, dtype=np.float64)
    if a.size >= 3:
        mid = np.median(np.vstack([a[:-2], a[1:-1], a[2:]]), axis=0)
        a = np.concatenate([a[:1], mid, a[-1:]])
    return [float(v) for v in np.maximum.accumulate(a)]


class KneedMissing(RuntimeError):
    """`kneed` is not installed; the message says which extra brings it."""


def kneedle(xs: list[float], ys: list[float], sensitivity: float) -> float | None:
    """Kneedle's knee of an increasing concave curve, or None."""
    try:
        from kneed import KneeLocator
    except ImportError:
        raise KneedMissing(
            "finding a knee needs kneed: pip install 'infersight[capacity]'"
        ) from None

    if len(set(ys)) < 2:
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # kneed warns where it finds none; None says as much
        loc = KneeLocator(xs, ys, S=sensitivity, curve="concave", direction="increasing")
    knee = loc.knee
    return None if knee is None else float(knee)


def find_knee(sweep: Sweep, config: CapacityConfig = DEFAULT_CONFIG) -> Knee:
    xs = sweep.xs
    ys = smooth(sweep.ys)
    if len(xs) < 3:
        return Knee(None, None, tuple(ys), f"{len(xs)} steps; a knee needs at least 3")
    if ys[-1] <= 0:
        return Knee(None, None, tuple(ys), "no throughput at any step")
    x = kneedle(xs, ys, config.knee_sensitivity)
    if x is None:
        return Knee(
            None, None, tuple(ys), "no knee: throughput grows evenly over the sweep; sweep further"
        )
    i = xs.index(x)
    knee_y, last = ys[i], ys[-1]
    gain = last / knee_y - 1.0 if knee_y > 0 else float("inf")
    elasticity = math.log1p(gain) / math.log(xs[-1] / x) if knee_y > 0 else float("inf")
    if i == len(xs) - 1:
        return Knee(None, None, tuple(ys), f"the bend is at the last step ({x:g}); sweep further")
    if elasticity > config.flat_elasticity:
        return Knee(
            None,
            None,
            tuple(ys),
            f"still rising: throughput grows {gain:.0%} from {x:g} to {xs[-1]:g} (as x^"
            f"{elasticity:.2f}, over x^{config.flat_elasticity:g}); sweep further",
        )
    return Knee(
        x,
        knee_y,
        tuple(ys),
        f"throughput {knee_y:.4g} at {x:g}, +{gain:.0%} by {xs[-1]:g} (flat: as x^"
        f"{elasticity:.2f})",
    )
