"""The scenario registry: each entry a cause, its ground truth and the seed section it is from.

Data, not code: a scenario is its metadata, the static settings it overrides (the service as
configured before anything breaks) and the fault function that changes the world over time.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from infersight.lab.sim import faults
from infersight.lab.sim.context import Ctx, Effect


@dataclass(frozen=True)
class Scenario:
    name: str
    roots: tuple[str, ...]
    layer: str
    seed_section: str
    description: str
    fault: Callable[[Ctx], Effect]
    config: Mapping[str, Any] = field(default_factory=dict)
    contributing: tuple[str, ...] = ()
    #: hour of day the run should reach its onset around (the 02:17 incident)
    anchor_hour: float | None = None
    #: the engine dialects the cause can happen in (empty: all), and why not in the others
    engines: tuple[str, ...] = ()
    engines_why: str = ""
    #: canonical signals (event rates, a throttle flag) one of which must be above zero after
    #: the onset, before the diagnosis, for a draw to hold the fault at all: an OOM cascade in
    #: which no card ran out of memory is not one. Empty: every draw holds it.
    shows_as: tuple[str, ...] = ()
    #: readings in a row `shows_as` must hold for (one OOM is an OOM; a throttle flag on for
    #: one minute is a flicker, not a clock held down)
    shows_for: int = 1

    def applies_to(self, dialect: str) -> bool:
        """Whether this cause exists in a server of that dialect (`canonical`: always)."""
        from infersight.lab.sim.dialects import STACKS

        engine = STACKS.get(dialect, dialect)
        return not self.engines or dialect == "canonical" or engine in self.engines

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "roots": list(self.roots),
            "contributing": list(self.contributing),
            "layer": self.layer,
            "seed_section": self.seed_section,
            "description": self.description,
            "engines": list(self.engines) or None,
            "engines_why": self.engines_why or None,
            "shows_as": list(self.shows_as) or None,
            "shows_for": self.shows_for,
        }


def _s(
    name: str,
    roots: tuple[str, ...],
    layer: str,
    seed: str,
    description: str,
    fault: Callable[[Ctx], Effect],
    **config: Any,
) -> Scenario:
    contributing = tuple(config.pop("contributing", ()))
    anchor = config.pop("anchor_hour", None)
    engines = tuple(config.pop("engines", ()))
    why = config.pop("engines_why", "")
    shows_as = tuple(config.pop("shows_as", ()))
    shows_for = int(config.pop("shows_for", 1))
    return Scenario(
        name,
        roots,
        layer,
        seed,
        description,
        fault,
        config,
        contributing,
        anchor,
        engines,
        why,
        shows_as,
        shows_for,
    )


_ALL = [
    _s(
        "healthy_diurnal", (), "", "6.1", "No fault: a day/night curve with bursts.", faults.healthy
    ),
    _s(
        "healthy_flat",
        (),
        "",
        "6.1",
        "No fault: a global service with a shallow night.",
        faults.healthy,
        night_fraction=0.65,
    ),
    _s(
        "healthy_spiky",
        (),
        "",
        "6.1",
        "No fault: many short bursts (push notifications).",
        faults.healthy,
        bursts_per_day=30.0,
        burst_size=0.6,
    ),
    _s(
        "healthy_rollouts",
        (),
        "",
        "2.3",
        "No fault: a deploy every hour replaces the replicas one at a time (models on local disk).",
        faults.routine_rollouts,
    ),
    _s(
        "memory_limit_oom",
        ("memory_limit_oom",),
        "service",
        "3.2",
        "A release holds more memory per request: replicas reach their memory limit, are "
        "OOM-killed and restart, and their traffic takes the rest to the limit in turn.",
        faults.memory_limit_oom,
        shows_as=("infra.oom_kills",),
    ),
    _s(
        "batch_window_starvation",
        ("batch_window_starvation",),
        "inference",
        "3.1",
        "A long fixed batch window: at night batches never fill, P50 rises above the day's.",
        faults.batch_window,
    ),
    _s(
        "max_batch_too_large",
        ("max_batch_too_large",),
        "inference",
        "3.1",
        "Max batch size far past the load-test knee: bursts form huge batches, slow and OOM.",
        faults.max_batch_too_large,
        bursts_per_day=48.0,
        burst_size=2.0,
    ),
    _s(
        "vram_oom_cascade",
        ("vram_oom_cascade",),
        "inference",
        "3.2",
        "No VRAM headroom: one OOM, retries and shifted traffic OOM the neighbours.",
        faults.vram_oom_cascade,
        contributing=("traffic_surge",),
        shows_as=("inference.oom_rate",),
    ),
    _s(
        "vram_leak",
        ("vram_leak",),
        "inference",
        "3.2",
        "The serving process leaks VRAM until it OOMs and restarts, again and again.",
        faults.vram_leak,
    ),
    _s(
        "shared_gpu_contention",
        ("shared_gpu_contention",),
        "inference",
        "3.2",
        "A second process on the GPU takes VRAM and GPU time.",
        faults.shared_gpu,
    ),
    _s(
        "threadpool_too_large",
        ("threadpool_too_large",),
        "service",
        "3.3",
        "A huge thread pool admits every request at once: VRAM and CPU pressure, OOM in bursts.",
        faults.threadpool_too_large,
        engines=("native",),
        engines_why="vLLM, TGI and Triton have no request thread pool to oversize: their "
        "admission knob is the batch or sequence cap (max_batch_too_large) or, in Triton, the "
        "model instance count (threadpool_too_small, which counts those too)",
    ),
    _s(
        "threadpool_too_small",
        ("threadpool_too_small",),
        "service",
        "3.3",
        "Too few workers for the GPU's concurrency: queue grows while the GPU idles.",
        faults.threadpool_too_small,
        # requests waited for a worker for as long as an alert must hold (3 readings): a pool
        # cut that still covers the load (a mild cut at night) is not too small
        shows_as=("service.queue_length",),
        shows_for=3,
    ),
    _s(
        "unbounded_queue",
        ("unbounded_queue",),
        "service",
        "3.3",
        "Overload into an unbounded queue: waits grow past the client timeout, goodput collapses.",
        faults.unbounded_queue,
        contributing=("traffic_surge",),
    ),
    _s(
        "traffic_surge",
        ("traffic_surge",),
        "access",
        "2.2",
        "A genuine surge saturates compute: queue up with GPU util near 100% (scale out).",
        faults.traffic_surge,
        max_wait_s=2.0,
    ),
    _s(
        "vector_db_swap",
        ("vector_db_swap",),
        "dependency",
        "4.1",
        "A data import outgrows the vector DB's RAM: queries page from disk, ms become s.",
        faults.vector_db_swap,
    ),
    _s(
        "cache_capacity",
        ("cache_capacity",),
        "dependency",
        "4.1",
        "The cache no longer holds the working set: hit ratio falls, retrieval load rises.",
        faults.cache_capacity,
    ),
    _s(
        "cache_stampede",
        ("cache_stampede",),
        "dependency",
        "4.1",
        "A hot key expires under load and every request rebuilds it (no singleflight).",
        faults.cache_stampede,
        hot_key_share=0.25,
        hot_key_load_s=3.0,
    ),
    _s(
        "gpu_thermal_throttling",
        ("gpu_thermal_throttling",),
        "infrastructure",
        "4.2",
        "Failed cooling heats some GPUs past the threshold; clocks drop, batches slow.",
        faults.thermal,
        # throttled for as long as an alert must hold (3 readings): a card that only reached
        # the threshold by the time of the diagnosis has not slowed anything yet
        shows_as=("infra.gpu_throttle",),
        shows_for=3,
    ),
    _s(
        "gpu_hardware_fault",
        ("gpu_hardware_fault",),
        "infrastructure",
        "4.2",
        "One card raises ECC double-bit errors and Xid 48; its process crashes now and then.",
        faults.hardware_fault,
    ),
    _s(
        "slow_instance",
        ("slow_instance",),
        "infrastructure",
        "4.2",
        "One machine among identical ones runs its batches markedly slower.",
        faults.slow_instance,
    ),
    _s(
        "network_retransmits",
        ("network_retransmits",),
        "infrastructure",
        "4.3",
        "Packet loss on some hosts: retransmission timeouts stretch the latency tail.",
        faults.retransmits,
    ),
    _s(
        "model_cold_start",
        ("model_cold_start",),
        "infrastructure",
        "4.3",
        "A rolling deploy loads the model from remote storage: minutes down per wave.",
        faults.cold_start,
    ),
    _s(
        "log_disk_io",
        ("log_disk_io",),
        "infrastructure",
        "4.3",
        "Debug logging under load saturates the log disk; synchronous writes stall requests.",
        faults.log_disk,
        disk_write_bps=150e6,
    ),
    _s(
        "lb_instance_removed",
        ("lb_instance_removed",),
        "access",
        "2.3",
        "Instances fall out of the load balancer while up; the rest take their traffic.",
        faults.lb_removed,
    ),
    _s(
        "gc_pauses",
        ("gc_pauses",),
        "service",
        "5.2",
        "Full garbage collections grow long and frequent; every thread stops with them.",
        faults.gc_pauses,
        engines=("native", "vllm"),
        engines_why="TGI's router (Rust) and Triton (C++) have no garbage collector",
    ),
    _s(
        "incident_0217",
        ("vector_db_swap", "cache_capacity"),
        "dependency",
        "5",
        "The 02:17 incident: vector DB swap + cache capacity ⇒ backlog, starving batches.",
        faults.incident_0217,
        night_fraction=0.55,
        anchor_hour=2.283,
    ),
]

SCENARIOS: dict[str, Scenario] = {s.name: s for s in _ALL}


class UnknownScenarioError(KeyError):
    def __str__(self) -> str:
        return f"unknown scenario {self.args[0]!r}; `list_scenarios()` names the known ones"


class NotApplicableError(ValueError):
    """The scenario's cause cannot happen in a server of that dialect."""


def check_applies(name: str, dialect: str) -> None:
    sc = get_scenario(name)
    if not sc.applies_to(dialect):
        raise NotApplicableError(
            f"scenario {name} does not apply to the {dialect} dialect ({sc.engines_why}); "
            f"choose --dialect {' or '.join(sc.engines)}"
        )


def get_scenario(name: str) -> Scenario:
    try:
        return SCENARIOS[name]
    except KeyError:
        raise UnknownScenarioError(name) from None
