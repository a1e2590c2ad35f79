"""LLM-serving failure modes the field guide does not name (metrics catalog §6), on synthetic
frames in vLLM's canonical signals: each is confirmed on its own signature and nothing else."""

from __future__ import annotations

from diagnose_frames import Spec
from diagnose_frames import step_frame as _frame

from infersight.diagnose import diagnose

NODES = ("node-0", "node-1", "node-2", "node-3")


def _fleet(before: float, after: float, only: str | None = None) -> dict[str, tuple[float, float]]:
    return {n: (before, after if only in (None, n) else before) for n in NODES}


def _base() -> Spec:
    """A steady vLLM fleet: what stays the same in every case below."""
    return {
        "infra.target_up": _fleet(1.0, 1.0),
        "service.request_rate": _fleet(20.0, 20.0),
        "inference.gpu_util": _fleet(0.7, 0.7),
        "infra.gpu_temp_c": _fleet(65.0, 65.0),
        "infra.gpu_sm_clock_mhz": _fleet(1800.0, 1800.0),
        "inference.gpu_mem_used_ratio": _fleet(0.9, 0.9),
        "dependency.vector_query_p99": {"vectordb-0": (0.02, 0.02)},
        "dependency.cache_hit_ratio": {"cache-0": (0.95, 0.95)},
    }


def _roots(spec: Spec) -> list[str]:
    return [r.hypothesis for r in diagnose({"incident": _frame(spec)}).root_causes]


def test_kv_cache_full_with_preemptions_is_the_root() -> None:
    spec = _base() | {
        "inference.kv_cache_usage": _fleet(0.6, 0.97),
        "inference.preemption_rate": _fleet(0.01, 5.0),
        "service.itl_p99": _fleet(0.03, 0.25),
        "service.e2e_latency_p99": _fleet(2.0, 9.0),
        "service.queue_length": _fleet(2.0, 40.0),
        "inference.running_requests": _fleet(30.0, 30.0),
        "inference.generation_tokens_rate": _fleet(900.0, 400.0),
    }
    assert _roots(spec)[0] == "kv_cache_preemption"


def test_kv_cache_full_without_preemptions_is_not_claimed() -> None:
    """A full KV cache alone is how vLLM is meant to run; only thrashing is a fault."""
    spec = _base() | {
        "inference.kv_cache_usage": _fleet(0.95, 0.96),
        "inference.preemption_rate": _fleet(0.0, 0.0),
        "service.e2e_latency_p99": _fleet(2.0, 2.0),
    }
    dx = diagnose({"incident": _frame(spec)})
    h = dx.hypothesis("kv_cache_preemption")
    assert h is not None and h.verdict != "confirmed"
    assert "kv_cache_preemption" not in [r.hypothesis for r in dx.root_causes]


def test_long_prefill_raises_ttft_with_flat_inter_token_latency() -> None:
    spec = _base() | {
        "service.ttft_p99": _fleet(0.3, 3.0),
        "service.itl_p99": _fleet(0.03, 0.03),
        "inference.prefill_time_p99": _fleet(0.2, 2.5),
        "service.e2e_latency_p99": _fleet(2.0, 4.5),
    }
    assert "long_prefill_blocking" in _roots(spec)[:1]


def test_hang_where_metrics_answer_but_tokens_stop() -> None:
    spec = _base() | {
        "inference.generation_tokens_rate": _fleet(900.0, 0.0, only="node-1"),
        "inference.running_requests": _fleet(24.0, 24.0),
        "service.queue_length": _fleet(2.0, 60.0, only="node-1"),
        "service.e2e_latency_p99": _fleet(2.0, 30.0, only="node-1"),
    }
    dx = diagnose({"incident": _frame(spec)})
    hang = dx.hypothesis("engine_hang")
    assert hang is not None and hang.verdict == "confirmed" and hang.instances == ("node-1",)
    assert dx.root_causes[0].hypothesis == "engine_hang"
