"""Scenario cases for detection: windows cut from a simulated run, and what must be flagged.

Shared by tests/detect/test_sim.py and bench/detect_bench.py. The expectations name, per
scenario, signals that a correct detector must flag on the ground-truth instances (by any kind
of finding); the ground truth itself (instances, onset) comes from the simulator.
"""

from __future__ import annotations

from dataclasses import dataclass

from infersight.detect import DetectionResult, detect
from infersight.frame import MetricFrame

#: scenario → signals that must be flagged on at least one ground-truth instance
EXPECT: dict[str, tuple[str, ...]] = {
    "batch_window_starvation": ("inference.batch_fill_wait_p99", "service.e2e_latency_p50"),
    "max_batch_too_large": ("inference.forward_time_p99",),
    "vram_oom_cascade": ("inference.gpu_mem_used_ratio",),
    "vram_leak": ("inference.gpu_mem_used_ratio",),
    "shared_gpu_contention": ("inference.forward_time_p99",),
    "threadpool_too_large": ("service.e2e_latency_p99",),
    "threadpool_too_small": ("service.threadpool_busy_ratio",),
    "unbounded_queue": ("service.queue_length",),
    "traffic_surge": ("service.request_rate",),
    "vector_db_swap": ("dependency.vector_query_p99", "infra.swap_in_rate"),
    "cache_capacity": ("dependency.cache_evictions",),
    "cache_stampede": ("dependency.cache_concurrent_loads",),
    "gpu_thermal_throttling": ("infra.gpu_temp_c",),
    "gpu_hardware_fault": ("infra.gpu_xid",),
    "slow_instance": ("inference.forward_time_p99",),
    "network_retransmits": ("infra.tcp_retrans_ratio",),
    "model_cold_start": ("inference.model_load_time",),
    "log_disk_io": ("infra.disk_util",),
    "lb_instance_removed": ("service.request_rate",),
    "gc_pauses": ("service.gc_pause_ratio",),
    "incident_0217": ("dependency.vector_query_p99", "dependency.cache_evictions"),
}
HEALTHY = ("healthy_diurnal", "healthy_flat", "healthy_spiky")
#: faults that only show under daytime load need a run long enough to reach the day
HOURS: dict[str, float] = {"max_batch_too_large": 26.0, "vram_oom_cascade": 26.0}
DEFAULT_HOURS = 10.0
#: scenarios where detection currently finds nothing on the truth instances (see the bench)
KNOWN_MISSES = frozenset({"threadpool_too_large", "cache_stampede"})
#: the fault grows with the morning ramp; with only the hour before as baseline (the run is too
#: short for yesterday) the ramp itself is flagged before the ground-truth onset
ONSET_UNRELIABLE = frozenset({"max_batch_too_large"})
#: how long after the onset the window ends (a leak needs time to show)
AFTER_S: dict[str, float] = {"vram_leak": 6000.0}
DEFAULT_AFTER_S = 1200.0


def cut(frame: MetricFrame, end: float, length_s: float = 3600.0) -> dict[str, MetricFrame]:
    """Incident window of `length_s` ending at `end` (kept inside the run), with the hour
    before and the day before where the run covers them in full."""
    end = min(end, frame.end)
    start = max(frame.start, end - length_s + frame.step)
    inc = frame.slice_time(start, end)
    out = {"incident": inc}
    for name, lag in (("baseline-1h", 3600.0), ("baseline-1d", 86400.0)):
        if start - lag >= frame.start:
            b = frame.slice_time(start - lag, end - lag)
            if b.n == inc.n:
                out[name] = b
    return out


@dataclass(frozen=True)
class CaseResult:
    scenario: str
    expected: tuple[str, ...]
    hit: tuple[str, ...]  # expected signals flagged on a truth instance
    onset_error_s: float | None  # earliest expected finding on a truth instance - truth onset
    onset_uncertainty_s: float  # what the detector claims for that finding
    truth_instances_flagged: int
    truth_instances: int
    findings: int
    result: DetectionResult

    @property
    def recall(self) -> float:
        return len(self.hit) / len(self.expected) if self.expected else 1.0


def run_case(scenario: str, instances: int, seed: int, hours: float | None = None) -> CaseResult:
    from infersight.lab.sim.run import simulate

    h = hours if hours is not None else HOURS.get(scenario, DEFAULT_HOURS)
    sim = simulate(scenario, hours=h, instances=instances, seed=seed)
    truth = sim.truth
    assert truth.onset is not None
    w = cut(sim.frame, truth.onset + AFTER_S.get(scenario, DEFAULT_AFTER_S))
    r = detect(w)
    expected = EXPECT[scenario]
    tinst = set(truth.instances)
    on_truth = [a for a in r.anomalies if a.instance in tinst]
    hit = tuple(s for s in expected if any(a.signal == s for a in on_truth))
    first = min((a for a in on_truth if a.signal in expected), key=lambda a: a.onset, default=None)
    err = None if first is None else first.onset
    return CaseResult(
        scenario=scenario,
        expected=expected,
        hit=hit,
        onset_error_s=None if err is None else err - truth.onset,
        onset_uncertainty_s=0.0 if first is None else first.onset_uncertainty_s,
        truth_instances_flagged=len({a.instance for a in on_truth}),
        truth_instances=len(tinst),
        findings=len(r.anomalies),
        result=r,
    )


def healthy_findings(
    scenario: str, hours: float, instances: int, seed: int, history_h: float = 0.0
) -> list[int]:
    """Findings in consecutive 1 h windows over a healthy run (after its first two hours, or
    after `history_h` hours of history, which gives every window yesterday's baseline)."""
    from infersight.lab.sim.run import simulate

    sim = simulate(scenario, hours=hours, instances=instances, seed=seed, history_h=history_h)
    f = sim.frame
    counts: list[int] = []
    end = f.start + max(2.0, history_h + 1.0) * 3600.0
    while end <= f.end:
        counts.append(len(detect(cut(f, end)).anomalies))
        end += 3600.0
    return counts
