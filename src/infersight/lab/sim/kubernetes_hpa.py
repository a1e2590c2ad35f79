"""The engines' HorizontalPodAutoscaler in the simulator's Kubernetes dialect, and the pods it
adds that no node can take.

Its floor is the fleet: GPU replicas are kept warm, since a model takes minutes to load. Its
ceiling is `EXTRA` replicas past what the fleet's GPU nodes hold, so a replica it adds past the
fleet is created and waits Pending (no node has a free GPU): a surge the cluster cannot follow.
Its target is the load per replica of a normal day (`TARGET_QUANTILE` of the load before any
fault), so a busy hour may ask for a replica more and a surge asks for the ceiling. Tolerance
and the scale-down stabilisation window are Kubernetes' defaults (the HPA controller's
`--horizontal-pod-autoscaler-tolerance` and the behaviour's 300 s scale-down window)."""

from __future__ import annotations

import numpy as np

from infersight.lab.sim.drivers import FloatArray
from infersight.lab.sim.run import SimResult

#: replicas past the fleet's GPU nodes the ceiling allows
EXTRA = 2
TARGET_QUANTILE = 0.9
TOLERANCE = 0.1
DOWN_STABILISATION_S = 300.0


def desired_replicas(res: SimResult, m: int) -> tuple[FloatArray, FloatArray]:
    """(desired replicas within [m, m + EXTRA], whether the unbounded count was past a bound:
    the ScalingLimited condition) per step."""
    offered = np.nan_to_num(res.trace.fleet["offered"])
    onset = res.truth.onset
    normal = offered if onset is None else offered[res.times < onset]
    if normal.size < 10:
        normal = offered
    target = float(np.quantile(normal, TARGET_QUANTILE)) / m
    ratio = offered / (m * target) if target > 0 else np.ones(offered.size)
    raw = np.where(np.abs(ratio - 1.0) > TOLERANCE, np.ceil(m * ratio - 1e-9), float(m))
    bounded = np.clip(raw, m, m + EXTRA)
    # scaling down waits for the window: the highest recommendation of the last 300 s holds
    hold = max(1, round(DOWN_STABILISATION_S / res.step))
    padded = np.concatenate([np.full(hold - 1, bounded[0]), bounded])
    desired = np.lib.stride_tricks.sliding_window_view(padded, hold).max(axis=1)
    limited = ((raw > m + EXTRA) | (raw < m)).astype(np.float64)
    return desired, limited
