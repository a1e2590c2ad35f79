"""The lab's faults: what each does, where, and what a diagnosis should name (its ground
truth). `faults.py` injects and clears them."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class FaultSpec:
    name: str
    where: str  # "api", "redis", "vector", "replica", "host", "fleet" (every replica)
    what: str
    expected: tuple[str, ...]  # hypotheses that name it (root cause, or the right layer/hop)
    layer: str
    real: bool  # False: the modelled GPU's state
    #: the least time the fault needs to do what defines it, for a run that holds each fault
    #: a fixed time (the leak fills the card's headroom, about 8 GiB at 60 MiB/s, in 137 s; a
    #: gateway's moving average of a server's last responses takes minutes to show a slow link)
    min_hold_s: float = 0.0


FAULTS: dict[str, FaultSpec] = {
    f.name: f
    for f in (
        FaultSpec(
            "api-pool-shrink",
            "api",
            "the API's worker pool cut to 1 slot",
            ("threadpool_too_small",),
            "service",
            True,
        ),
        FaultSpec(
            "batch-delay",
            "replica",
            "the replica's batcher switched to a fixed 250 ms window",
            ("batching_delay", "batch_window_starvation"),
            "inference",
            True,
        ),
        FaultSpec(
            "replica-kill",
            "replica",
            "the replica's process killed (SIGKILL)",
            ("instance_down", "lb_instance_removed"),
            "infrastructure",
            True,
        ),
        FaultSpec(
            "redis-maxmemory",
            "redis",
            "Redis maxmemory cut to hold about a tenth of the cached answers",
            ("cache_capacity",),
            "dependency",
            True,
        ),
        FaultSpec(
            "link-slow",
            "replica",
            "200 ms added per chunk on the link to the replica",
            (
                "upstream_link_fault",
                "service_hop_slow",
                "upstream_connect_slow",
                "network_retransmits",
                "slow_instance",
            ),
            "access",
            True,
            # the gateway's per-server response time is HAProxy's average of that server's
            # last 1024 responses: at the 2–3 requests/s a replica gets here, a slow link
            # weighs half of it only after about four minutes
            min_hold_s=240.0,
        ),
        FaultSpec(
            "link-lossy",
            "replica",
            "30% of new connections to the replica reset",
            (
                "upstream_link_fault",
                "upstream_connect_slow",
                "network_retransmits",
                "gateway_fault",
            ),
            "access",
            True,
        ),
        FaultSpec(
            "vector-out-of-ram",
            "vector",
            "the vector index's on-disk vectors evicted from the page cache every 20 ms",
            ("vector_db_swap",),
            "dependency",
            True,
        ),
        FaultSpec(
            "cpu-hog",
            "host",
            "stress-ng --cpu 2 beside the stack",
            ("host_cpu_contention", "slow_instance"),
            "infrastructure",
            True,
        ),
        FaultSpec(
            "disk-pressure",
            "host",
            "stress-ng --hdd 1 (O_DIRECT) writing in the lab's folder",
            ("log_disk_io",),
            "infrastructure",
            True,
        ),
        FaultSpec(
            "api-cpu-limit",
            "api",
            "the API's container CPU limit halved (a CFS quota; binding from --api-cpus 0.1)",
            ("cpu_limit_throttling",),
            "service",
            True,
        ),
        FaultSpec(
            "api-gc-pressure",
            "api",
            "1.5 M live objects in the API and cyclic garbage that outlives the young generations",
            ("gc_pauses",),
            "service",
            True,
        ),
        # a real engine's own (`lab up --engine vllm`; engine_faults.py)
        FaultSpec(
            "engine-kv-pressure",
            "fleet",
            "the API quotes 3x more of each passage and asks 256-token answers: requests of 7 KV "
            "blocks against the engines' 16",
            ("kv_cache_preemption",),
            "inference",
            True,
        ),
        FaultSpec(
            "engine-seqs-cap",
            "fleet",
            "every engine redeployed with --max-num-seqs 1: one sequence at a time",
            ("threadpool_too_small", "max_batch_too_large"),
            "inference",
            True,
        ),
        FaultSpec(
            "engine-admission-limit",
            "fleet",
            "every engine redeployed with 1 sequence and 1 queued at most: vLLM refuses the rest",
            ("upstream_overflow", "errors_high"),
            "inference",
            True,
        ),
        FaultSpec(
            "engine-restart",
            "replica",
            "the engine restarted with a real model load, compiled from an emptied cache",
            ("model_cold_start",),
            "inference",
            True,
        ),
        FaultSpec(
            "engine-cpu-limit",
            "replica",
            "the engine's processes limited to 0.1 CPU by a cgroup's CFS quota",
            ("slow_instance",),
            "infrastructure",
            True,
        ),
        FaultSpec(
            "engine-hang",
            "replica",
            "the engine's scheduler stopped (SIGSTOP to its engine core); /metrics still answers",
            ("engine_hang",),
            "inference",
            True,
        ),
        FaultSpec(
            "engine-template-change",
            "api",
            "the API's prompt template puts each request's id first: no shared prefix",
            (),
            "inference",
            True,
        ),
        FaultSpec(
            "gpu-clock-drop",
            "replica",
            "SM clock to 45% with thermal slowdown (modelled)",
            ("gpu_thermal_throttling",),
            "infrastructure",
            False,
        ),
        FaultSpec(
            "gpu-xid",
            "replica",
            "Xid 79, GPU fallen off the bus (modelled)",
            ("gpu_hardware_fault", "instance_down"),
            "infrastructure",
            False,
        ),
        FaultSpec(
            "gpu-vram-leak",
            "replica",
            "VRAM leaking 60 MiB/s until OOM (modelled)",
            ("vram_leak", "vram_exhaustion_ahead", "vram_oom_cascade"),
            "inference",
            False,
            min_hold_s=180.0,
        ),
    )
}

__all__ = ["FAULTS", "FaultSpec"]
