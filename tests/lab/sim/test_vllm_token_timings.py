"""The vLLM dialect exposes TTFT, ITL, prefill and decode as vLLM does (issue 30): a reader of
the vLLM demo must not conclude that infersight cannot read vLLM's TTFT."""

from __future__ import annotations

import numpy as np
import pytest

from infersight.lab.sim.dialects import emit
from infersight.lab.sim.outputs import sim_frame
from infersight.lab.sim.run import simulate

pytestmark = pytest.mark.sim

HISTOGRAMS = (
    "vllm:time_to_first_token_seconds",
    "vllm:inter_token_latency_seconds",
    "vllm:request_prefill_time_seconds",
    "vllm:request_decode_time_seconds",
)
SIGNALS = ("service.ttft_p99", "service.itl_p99", "inference.prefill_time_p99",
           "inference.decode_time_p99")  # fmt: skip


@pytest.fixture(scope="module")
def incident():  # type: ignore[no-untyped-def]
    return simulate("incident_0217", hours=1.5, instances=2, seed=3)


def test_the_vllm_dialect_emits_the_token_histograms(incident) -> None:  # type: ignore[no-untyped-def]
    names = set(emit(incident, "vllm").names())
    for h in HISTOGRAMS:
        assert {f"{h}_bucket", f"{h}_sum", f"{h}_count"} <= names, h


def test_they_map_back_to_the_canonical_signals(incident) -> None:  # type: ignore[no-untyped-def]
    frame = sim_frame(incident, "vllm")
    for name in SIGNALS:
        s = frame.get(name)
        assert s is not None, name
        assert np.isfinite(s.values).mean() > 0.8, name
    # prefill and decode use vLLM's request buckets (0.3 s and up), as vLLM does: coarse
    prefill = np.nanmedian(frame.get("inference.prefill_time_p99").values)  # type: ignore[union-attr]
    assert 0 < prefill <= 0.3
    # when the queue backs up (02:17), the first token waits with it; the gap between tokens
    # is the engine's iteration and does not take on the queue's seconds
    ttft_row = frame.get("service.ttft_p99").values[0]  # type: ignore[union-attr]
    itl_row = frame.get("service.itl_p99").values[0]  # type: ignore[union-attr]
    before, after = slice(0, 60), slice(-60, None)
    assert np.nanmedian(ttft_row[after]) > 5 * np.nanmedian(ttft_row[before])
    assert np.nanmedian(itl_row[after]) < 0.2 * np.nanmedian(ttft_row[after])
