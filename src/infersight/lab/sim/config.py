"""The fleet's static settings: what an SRE would find in the service's config files.

Everything a scenario changes *over time* lives in `Drivers` (drivers.py); this is the fixed
part. Units: seconds, bytes, requests per second, °C, MHz, W.
"""

from __future__ import annotations

from dataclasses import dataclass

GIB = float(2**30)


@dataclass(frozen=True)
class FleetConfig:
    # traffic (fleet-wide, requests per second)
    peak_rps_per_instance: float = 120.0
    night_fraction: float = 0.2  # trough over peak of the diurnal curve
    peak_hour: float = 14.0  # local hour of the daily peak
    noise: float = 0.06  # day-repeating wiggle (relative)
    jitter: float = 0.02  # fresh noise every step (relative)
    arrival_noise: float = 1.0  # each instance's arrivals: sd over Poisson's √mean (1: Poisson)
    bursts_per_day: float = 6.0
    burst_size: float = 0.6  # relative extra traffic at a burst's peak
    retry_prob: float = 0.5  # share of failed requests a client retries once
    client_timeout_s: float = 8.0

    # serving process (per instance)
    workers: int = 56  # thread pool / concurrency slots
    max_queue: int = 1024  # requests waiting for a worker; beyond it: 503
    max_wait_s: float | None = None  # admission control: drop requests older than this
    cpu_per_request_s: float = 0.004  # pre/post-processing on the CPU
    cpu_cores: float = 16.0
    gc_collections_per_s: float = 0.02
    gc_pause_s: float = 0.05

    # batcher
    batch_window_s: float = 0.025
    max_batch: int = 16
    adaptive_window: bool = False

    # GPU executor: batch time = (a + b·bs + c·max(0, bs - knee)²) · nominal/clock
    batch_fixed_s: float = 0.015
    batch_per_item_s: float = 0.0025
    batch_knee: int = 24
    batch_knee_s: float = 0.00005
    forward_sigma: float = 0.35  # spread of one batch's time around its mean

    # VRAM
    vram_total: float = 80.0 * GIB
    vram_weights: float = 44.0 * GIB
    vram_runtime: float = 6.0 * GIB
    vram_per_request: float = 0.40 * GIB  # state held by an admitted request (KV, inputs)
    vram_per_batch_item: float = 0.25 * GIB  # activations of one item while its batch runs

    # cold start
    model_load_local_s: float = 25.0
    model_load_remote_s: float = 180.0
    model_from_remote: bool = False
    health_check_delay_s: float = 15.0  # how long the LB keeps routing to a dead process

    # GPU hardware
    sm_clock_nominal_mhz: float = 1980.0
    sm_clock_min_mhz: float = 900.0
    throttle_temp_c: float = 83.0
    ambient_c: float = 30.0
    c_per_watt: float = 0.075  # °C above ambient per W at equilibrium
    thermal_tau_s: float = 90.0
    power_idle_w: float = 90.0
    power_max_w: float = 650.0

    # dependencies: cache (in front of retrieval)
    cache_capacity_ratio: float = 1.3  # cache size over the working set of keys
    cache_max_hit: float = 0.96
    cache_skew: float = 0.4  # hit = max_hit · min(1, ratio)^skew (Zipf-like popularity)
    cache_cmd_s: float = 0.0006
    hot_key_share: float = 0.05  # share of requests for the single hottest key
    hot_key_load_s: float = 0.4  # cost of rebuilding the hot key's value
    singleflight: bool = False

    # dependencies: vector database (shared; provisioned in proportion to the fleet)
    vector_queries_per_miss: float = 2.0
    vector_base_s: float = 0.008  # median search time, index in RAM
    vector_capacity_qps_per_instance: float = 400.0
    vector_ram: float = 64.0 * GIB
    vector_index: float = 40.0 * GIB
    vector_pages_per_fault_query: float = 400.0
    vector_disk_iops_per_instance: float = 4000.0
    vector_disk_await_s: float = 0.0005

    # network and disk
    segments_per_request: float = 40.0
    base_loss: float = 0.0002
    rto_s: float = 0.2
    log_bytes_per_request: float = 2000.0
    disk_write_bps: float = 400e6
    log_writes_per_request: float = 1.0
    disk_await_s: float = 0.0004
