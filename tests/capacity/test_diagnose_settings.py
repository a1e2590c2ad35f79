"""Sizing findings quote the setting to use, with `infersight.capacity`'s arithmetic."""

from __future__ import annotations

import re

import numpy as np
import pytest

from infersight.capacity.concurrency import concurrent
from infersight.diagnose import diagnose
from infersight.diagnose.context import Context
from infersight.diagnose.settings import batch_setting, pool_setting
from infersight.frame import MetricFrame, SignalSeries
from infersight.lab.evaluate.scenario_windows import alert_time, windows_at
from infersight.lab.sim import simulate

GIB = float(2**30)
NODES = ("node-0", "node-1")
N = 240


def _ctx(series: dict[str, np.ndarray]) -> Context:
    frame = MetricFrame(
        0.0, 60.0, N, {k: SignalSeries(NODES, np.vstack([v, v])) for k, v in series.items()}
    )
    return Context(frame, None, frame.start + 120 * frame.step)  # type: ignore[arg-type]


def test_a_knee_in_the_windows_own_batches_gives_the_max_batch() -> None:
    # batches of 1..64 items whose pass takes 20 ms up to 16 items and grows with them past
    # it: throughput stops growing at 16, so max batch 12 (16 × 0.8), range 12–14
    rng = np.random.default_rng(3)
    sizes = rng.choice([1, 2, 4, 8, 16, 32, 64], N).astype(float)
    fwd = 0.02 * np.maximum(1.0, sizes / 16) * (1 + rng.normal(0, 0.02, N))
    text = batch_setting(
        _ctx({"inference.batch_size": sizes, "inference.forward_time_avg": fwd}), NODES
    )
    assert text.startswith("Set max batch size to 12 (range 12–14)"), text
    assert "at 16" in text and "seed §3.1" in text


def test_no_knee_and_no_vram_names_the_command_that_finds_it() -> None:
    sizes = np.tile([1.0, 2.0, 4.0, 8.0], N // 4)
    text = batch_setting(
        _ctx({"inference.batch_size": sizes, "inference.forward_time_avg": np.full(N, 0.02)}), NODES
    )
    assert text.startswith("No setting from this window") and "capacity sweep" in text


def test_pool_setting_is_the_capacity_packages_v_over_m() -> None:
    rng = np.random.default_rng(0)
    flight = 4 + 2 * np.sin(np.arange(N) / 15) + rng.normal(0, 0.3, N)
    used = 50 * GIB + 0.5 * GIB * flight
    ctx = _ctx(
        {
            "service.concurrency_limit": np.full(N, 512.0),
            "service.threadpool_busy_ratio": flight / 512,
            "inference.gpu_mem_used_bytes": used,
            "inference.gpu_mem_used_ratio": used / (80 * GIB),
            "inference.forward_time_avg": np.full(N, 0.05),
        }
    )
    text = pool_setting(ctx, NODES)
    assert text is not None
    n = int(re.match(r"Set service.concurrency_limit to (\d+)", text).group(1))  # type: ignore[union-attr]
    # (80 GiB × 80% − 50 GiB) / 0.5 GiB = 28, the same function `capacity concurrency` uses
    assert n == concurrent(80 * GIB, 0.5 * GIB, 50 * GIB, 0.2)[2] == 28
    # 28 requests every 50 ms is 560/s; a 1 s wait holds 560 in the queue
    assert "a queue bound of 560 and a maximum wait of 1 s" in text


@pytest.mark.sim
@pytest.mark.slow
@pytest.mark.parametrize(
    ("scenario", "dialect", "quote"),
    [
        ("threadpool_too_large", "native", r"Set service\.concurrency_limit to (\d+) \("),
        ("max_batch_too_large", "vllm", r"Set max batch size to (?:at most )?(\d+) \("),
    ],
)
def test_simulated_findings_quote_the_setting(scenario: str, dialect: str, quote: str) -> None:
    res = simulate(scenario, hours=26, instances=6, seed=0, step=60.0)
    dx = diagnose(windows_at(res, dialect, alert_time(res)))
    assert dx.root_causes and dx.root_causes[0].hypothesis == scenario
    h = next(h for h in dx.hypotheses if h.id == scenario)
    m = re.search(quote, h.remedy)
    assert m is not None, h.remedy
    value = int(m.group(1))
    # the simulated cards hold ~50 GiB whatever the load and ~0.5–1 GiB per request or item:
    # with 20% of 80 GiB kept free, a few dozen at most, never 0, and under the faulty setting
    assert 1 <= value < 64


def test_without_kneed_the_batch_setting_falls_back_and_says_which_extra(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "kneed", None)  # `import kneed` raises ImportError
    rng = np.random.default_rng(3)
    sizes = rng.choice([1, 2, 4, 8, 16, 32, 64], N).astype(float)
    fwd = 0.02 * np.maximum(1.0, sizes / 16)
    series = {"inference.batch_size": sizes, "inference.forward_time_avg": fwd}
    text = batch_setting(_ctx(series), NODES)
    assert "pip install 'infersight[capacity]'" in text and "capacity sweep" in text
