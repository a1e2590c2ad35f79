"""Synthetic incident frames for the engine tests: each series steps at ONSET."""

from __future__ import annotations

import numpy as np

from infersight.frame import MetricFrame, SignalSeries

START, STEP, N = 1.75e9, 60.0, 240
ONSET = 180

#: signal → instance → (level before, level after ONSET)
Spec = dict[str, dict[str, tuple[float, float]]]


def step_frame(spec: Spec, seed: int = 0) -> MetricFrame:
    """The spec's levels with 2% multiplicative noise."""
    rng = np.random.default_rng(seed)
    series = {}
    for sig, per in spec.items():
        insts = tuple(per)
        v = np.empty((len(insts), N))
        for i, inst in enumerate(insts):
            before, after = per[inst]
            v[i, :ONSET], v[i, ONSET:] = before, after
            v[i] *= 1 + 0.02 * rng.standard_normal(N)
        series[sig] = SignalSeries(insts, v)
    return MetricFrame(START, STEP, N, series)
