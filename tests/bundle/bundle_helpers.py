"""Frames to bundle and a NaN-aware frame comparison, shared by the bundle tests."""

from __future__ import annotations

import numpy as np

from infersight.frame import MetricFrame

SIGNALS = ("service.queue_length", "inference.gpu_util", "infra.gpu_temp_c")


def make_frame(start: float = 1_700_000_000.0, n: int = 40, seed: int = 0) -> MetricFrame:
    rng = np.random.default_rng(seed)
    frame = MetricFrame(start, 15.0, n)
    for k, signal in enumerate(SIGNALS):
        insts = [f"node-{i}" for i in range(k + 2)]
        values = rng.normal(50, 10, size=(len(insts), n))
        values[rng.random(values.shape) < 0.1] = np.nan  # gaps
        values[0, :3] = [np.inf, -np.inf, 0.0]
        frame = frame.with_series(signal, insts, values)
    return frame


def assert_frames_equal(a: MetricFrame, b: MetricFrame) -> None:
    assert (a.start, a.step, a.n) == (b.start, b.step, b.n)
    assert a.signals == b.signals
    for name in a.signals:
        sa, sb = a.series[name], b.series[name]
        assert sa.instances == sb.instances, name
        np.testing.assert_array_equal(sa.values, sb.values)
