"""The pool-size check of seed §3.3: the configured limit against V/M estimated from the window."""

from __future__ import annotations

import numpy as np
import pytest

from infersight.diagnose.capacity import GIB, estimate, theil_sen
from infersight.diagnose.conditions import eval_condition
from infersight.diagnose.context import Context
from infersight.diagnose.kb import Condition, KBError, parse_rule
from infersight.frame import MetricFrame, SignalSeries

N = 180
NODES = ("node-0", "node-1", "node-2")
CARD = 80 * GIB
FIXED = 50 * GIB
PER_REQUEST = 0.5 * GIB  # the card holds (80 - 50) / 0.5 = 60 requests


def _frame(limit: float, *, vram: bool = True, seed: int = 0) -> MetricFrame:
    rng = np.random.default_rng(seed)
    t = np.arange(N)
    busy_rows, used_rows, ratio_rows = [], [], []
    for _ in NODES:
        flight = 4 + 2 * np.sin(t / 15) + rng.normal(0, 0.3, N)
        flight[120:124] = np.minimum(limit, 400)  # a burst the card cannot hold
        used = np.minimum(FIXED + PER_REQUEST * flight + rng.normal(0, 0.05 * GIB, N), CARD)
        used[124] = 0.0  # the OOM crash
        busy_rows.append(flight / limit)
        used_rows.append(used)
        ratio_rows.append(used / CARD)
    series = {
        "service.concurrency_limit": SignalSeries(NODES, np.full((len(NODES), N), limit)),
        "service.threadpool_busy_ratio": SignalSeries(NODES, np.array(busy_rows)),
    }
    if vram:
        series["inference.gpu_mem_used_bytes"] = SignalSeries(NODES, np.array(used_rows))
        series["inference.gpu_mem_used_ratio"] = SignalSeries(NODES, np.array(ratio_rows))
    return MetricFrame(0.0, 60.0, N, series)


def _ctx(frame: MetricFrame) -> Context:
    return Context(frame, None, frame.start + 120 * frame.step)  # type: ignore[arg-type]


OVER = Condition(signal="service.concurrency_limit", state="over_capacity", level=1.0, factor=2)
WITHIN = Condition(signal="service.concurrency_limit", state="within_capacity", level=1.0, factor=2)


def test_theil_sen_ignores_outliers() -> None:
    x = np.arange(50.0)
    y = 3.0 * x + 7.0
    y[[5, 17, 33]] = 1e6
    slope, intercept = theil_sen(x, y)
    assert slope == pytest.approx(3.0)
    assert intercept == pytest.approx(7.0)


def test_estimate_recovers_per_request_vram_and_the_weights() -> None:
    f = _frame(497)
    s = "inference.gpu_mem_used_bytes", "inference.gpu_mem_used_ratio"
    used, ratio = (f.get(x).row("node-0") for x in s)  # type: ignore[union-attr]
    busy = f.get("service.threadpool_busy_ratio").row("node-0")  # type: ignore[union-attr]
    limit = f.get("service.concurrency_limit").row("node-0")  # type: ignore[union-attr]
    cap = estimate(used, ratio, busy * limit, limit, 0.8)
    assert cap is not None
    assert cap.card == pytest.approx(CARD, rel=0.01)
    assert cap.per_request == pytest.approx(PER_REQUEST, rel=0.05)
    assert cap.fixed == pytest.approx(FIXED, rel=0.01)
    assert cap.safe() == pytest.approx((0.8 * CARD - FIXED) / PER_REQUEST, rel=0.1)
    assert cap.safe(1.0) == pytest.approx(60, rel=0.1)


def test_pool_far_above_what_the_card_holds_is_over_capacity() -> None:
    ctx = _ctx(_frame(497))
    out = eval_condition(ctx, OVER, None)
    assert out.truth is True
    assert out.instances == frozenset(NODES)
    text = out.evidence[0].statement
    assert "is 497 where the card holds about 6" in text and "GiB / 0.5" in text
    assert eval_condition(ctx, WITHIN, None).truth is False


def test_pool_within_what_the_card_holds_is_refuted() -> None:
    ctx = _ctx(_frame(56))
    assert eval_condition(ctx, OVER, None).truth is False
    within = eval_condition(ctx, WITHIN, None)
    assert within.truth is True
    assert within.instances == frozenset(NODES)


def test_without_vram_the_capacity_is_unknown() -> None:
    ctx = _ctx(_frame(497, vram=False))
    for c in (OVER, WITHIN):
        out = eval_condition(ctx, c, None)
        assert out.truth is None
        assert "inference.gpu_mem_used_bytes" in out.missing


def test_flat_in_flight_work_cannot_be_fitted() -> None:
    flat = np.full(N, 5.0)
    used = FIXED + PER_REQUEST * flat
    assert estimate(used, used / CARD, flat, np.full(N, 497.0), 0.8) is None


def test_capacity_state_reads_the_concurrency_limit_only() -> None:
    text = """
id: x
layer: service
title: x
seed: "3.3"
confirm:
  all:
    - {signal: service.threadpool_busy_ratio, state: over_capacity}
"""
    with pytest.raises(KBError, match="concurrency_limit"):
        parse_rule(text, "x.yaml")
