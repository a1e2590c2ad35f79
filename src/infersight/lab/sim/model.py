"""The step loop: queues, workers, batcher, GPU, VRAM and dependencies, one step at a time.

Each step is a fluid picture of the interval: requests arrive (fresh + client retries), the load
balancer spreads them over the instances it believes healthy, each instance serves at the
smallest of its demand, its worker pool's rate (workers / time a request holds a worker: Little's
law) and its GPU's rate. What is not served waits; what waits too long fails. A slow dependency
therefore holds workers longer, the queue grows, fewer requests reach the GPU, batches starve,
GPU util falls, and admitted requests keep their VRAM. None of that is written here as a rule:
it is what the arithmetic does.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from infersight.lab.sim.config import FleetConfig
from infersight.lab.sim.deps import DepState, step_deps
from infersight.lab.sim.drivers import Drivers, FloatArray, Spread, clip
from infersight.lab.sim.gpu import Thermal, batching, step_thermal, vram_bytes, vram_peak
from infersight.lab.sim.infra import RTO_MIN_S, cpu, gc, log_disk, network

EPS = 1e-9
XID_FATAL = (48.0, 79.0, 94.0, 95.0)  # Xids that kill the process using the GPU
RESTART_S = 5.0  # from a crash to the new process running (then it loads the model)
RSS_PER_REQUEST = 0.02 * 2.0**30  # host memory an admitted request holds (inputs, buffers)


@dataclass
class Trace:
    """Everything the loop recorded: per instance (n, N) and fleet-wide (n,)."""

    inst: dict[str, FloatArray] = field(default_factory=dict)
    fleet: dict[str, FloatArray] = field(default_factory=dict)


class _Recorder:
    def __init__(self, n: int, instances: int) -> None:
        self.n, self.instances = n, instances
        self.trace = Trace()

    def inst(self, t: int, **values: FloatArray) -> None:
        for k, v in values.items():
            arr = self.trace.inst.get(k)
            if arr is None:
                arr = self.trace.inst[k] = np.full((self.n, self.instances), np.nan)
            arr[t] = v

    def fleet(self, t: int, **values: float) -> None:
        for k, v in values.items():
            arr = self.trace.fleet.get(k)
            if arr is None:
                arr = self.trace.fleet[k] = np.full(self.n, np.nan)
            arr[t] = v


def run_model(
    cfg: FleetConfig,
    drv: Drivers,
    demand: FloatArray,
    dt: float,
    rng: np.random.Generator,
    machines: Spread | None = None,
    noise_rng: np.random.Generator | None = None,
) -> Trace:
    """`machines`: the machines' differences (None: identical machines); `noise_rng`: each
    instance's own Poisson arrivals (None: the fluid mean, no per-instance noise)."""
    n, m = drv.lb_weight.shape
    rss_base = np.full(m, 3.0 * 2.0**30) if machines is None else machines.rss_base
    # seconds since the run's start at which the running process started (negative: before)
    started = -np.full(m, 7.0 * 86400.0) if machines is None else -machines.uptime_s
    # standard normal per step and instance: arrivals ~ Poisson(mean) ≈ mean + √mean·z
    z = np.zeros((n, m)) if noise_rng is None else noise_rng.standard_normal((n, m))
    noise = cfg.arrival_noise
    rec = _Recorder(n, m)
    q = np.zeros(m)
    down_left = np.zeros(m)  # seconds until the process serves again (0 = up)
    since_down = np.full(m, 1e9)
    leak = np.zeros(m)
    restarts = np.zeros(m)
    load_time = np.full(m, cfg.model_load_local_s) if machines is None else machines.load_s.copy()
    xid_last = np.zeros(m)
    ecc = np.zeros(m)
    pcie = np.zeros(m)
    service_s = np.full(m, 0.06)
    ambient = np.asarray(cfg.ambient_c + rng.normal(0.0, 1.5, m), dtype=np.float64)
    th = Thermal(ambient + 30.0, np.ones(m))
    dep_state = DepState(load_s=cfg.hot_key_load_s)
    retries = 0.0
    fatal_xid = np.isin(drv.xid, XID_FATAL)
    fleet_rate = float(demand[0])
    for t in range(n):
        dep = step_deps(
            cfg,
            dep_state,
            dt,
            fleet_rate,
            m,
            float(drv.workers[t].sum()),
            float(drv.cache_ratio[t]),
            float(drv.vector_index[t]),
            bool(drv.hot_key_expiry[t]),
        )
        # -- routing -------------------------------------------------------------------------
        up = down_left <= 0.0
        routed = up | (since_down < cfg.health_check_delay_s)
        weight = drv.lb_weight[t] * routed
        total_w = float(weight.sum())
        offered = demand[t] * drv.traffic_mult[t] + retries / dt
        arrivals = offered * dt * weight / total_w if total_w > 0 else np.zeros(m)
        refused = np.where(up, 0.0, arrivals) + (offered * dt if total_w <= 0 else 0.0) / m
        arrivals = np.where(up, np.maximum(arrivals + noise * np.sqrt(arrivals) * z[t], 0.0), 0.0)

        # -- per-request costs that do not depend on the rate ---------------------------------
        net = network(cfg, drv.loss[t], arrivals / dt)
        hot = cfg.hot_key_share * dep.hot_missing * dep.hot_wait_s
        dep_s = (
            dep.cache_cmd_s
            + (1.0 - dep.hit_ratio) * cfg.vector_queries_per_miss * dep.vector_mean_s
            + hot
            + net.p_request_stall * RTO_MIN_S
        )
        slowdown = drv.slow_factor[t] / th.clock_ratio / (1.0 - drv.other_util[t])
        workers = drv.workers[t]
        demand_rps = (q + arrivals) / dt

        # -- fixed point: service time ↔ rate ------------------------------------------------
        rate = np.minimum(demand_rps, workers / service_s)
        for _ in range(2):
            b = batching(cfg, rate, drv.batch_window[t], drv.max_batch[t], workers, slowdown, q)
            g = gc(cfg, rate, drv.gc_rate_mult[t], drv.gc_pause_mult[t])
            disk = log_disk(cfg, rate, drv.log_mult[t])
            busy_est = np.minimum(workers, rate * service_s)
            c = cpu(cfg, rate, busy_est, g.pause_ratio)
            hold = (
                cfg.cpu_per_request_s * c.stretch
                + dep_s
                + 0.5 * b.wait_max_s
                + b.batch_s
                + disk.stall_s
            )
            service_s = hold / (1.0 - g.pause_ratio)
            rate = np.minimum.reduce([demand_rps, workers / service_s, b.capacity_rps])
            rate = np.where(up, rate, 0.0)

        served = rate * dt
        q_next = q + arrivals - served
        rejected = np.maximum(q_next - drv.max_queue[t], 0.0)
        q_next -= rejected
        if cfg.max_wait_s is not None:
            over = np.maximum(q_next - rate * cfg.max_wait_s, 0.0)
            rejected += over
            q_next -= over
        queue_wait = 0.5 * (q + q_next) / np.maximum(rate, EPS)
        queue_wait = np.where(q + q_next > 0.5, queue_wait, 0.0)
        # FIFO waits spread ±30% around the mean; the rest of the request around its service
        worst = 1.3 * queue_wait + 1.5 * service_s
        spread = 0.6 * queue_wait + 0.5 * service_s + EPS
        p_timeout = clip((worst - cfg.client_timeout_s) / spread, 0.0, 1.0)
        timeouts = served * p_timeout

        # requests in the system: being served plus waiting; a worker holds each one it has
        # taken (waiting at the batcher for the GPU included), the rest wait for a worker
        in_system = rate * service_s + q_next
        in_flight = np.minimum(workers, in_system)
        waiting = in_system - in_flight
        mult = drv.vram_request_mult[t]
        leak = leak + drv.vram_leak_bps[t] * dt * up
        ours = vram_bytes(cfg, in_flight, b.batch_size * (rate > 0), mult, leak)
        device = ours + drv.other_vram[t]
        peak = vram_peak(cfg, device, in_flight, b.batch_size, drv.max_batch[t], workers, mult)
        oom = up & (peak > cfg.vram_total)
        xid = drv.xid[t]
        fatal = up & fatal_xid[t]
        # host memory: what the process holds, and the kernel's kill at its limit (OOMKilled)
        rss = (rss_base + RSS_PER_REQUEST * drv.rss_request_mult[t] * in_flight) * up
        memkill = up & (rss > drv.mem_limit[t])
        crash = oom | fatal | memkill | (up & drv.restart[t])
        lost = np.where(crash & ~drv.restart[t], in_flight + q_next, 0.0)
        q_next = np.where(crash, 0.0, q_next)

        # -- restarts --------------------------------------------------------------------------
        remote = bool(drv.model_remote[t])
        load = cfg.model_load_remote_s if remote else cfg.model_load_local_s
        load_now = load * rng.uniform(0.85, 1.15, m)
        down_left = np.where(crash, load_now + RESTART_S, np.maximum(down_left - dt, 0.0))
        # the crash falls mid-step; the new process starts RESTART_S later
        ran_since = started.copy()  # start time of the process that ran in this step
        started = np.where(crash, (t - 0.5) * dt + RESTART_S, started)
        load_time = np.where(crash, load_now, load_time)
        since_down = np.where(crash, 0.0, np.where(up & ~crash, 1e9, since_down + dt))
        restarts += crash
        leak = np.where(crash, 0.0, leak)
        xid_last = np.where(xid > 0, xid, xid_last)
        ecc += drv.ecc_dbe[t]
        pcie += drv.pcie_replay_rate[t] * dt

        errors = timeouts + rejected + lost + refused
        ok = served - timeouts
        retries = cfg.retry_prob * float(errors.sum())
        fleet_rate = float(ok.sum() + timeouts.sum()) / dt

        util = np.where(up, b.util, 0.0)
        total_util = clip(util + drv.other_util[t], 0.0, 1.0)
        power = step_thermal(cfg, th, dt, total_util, ambient + drv.ambient_offset[t])
        throttle = (th.clock_ratio < 0.999) & (th.temp_c > cfg.throttle_temp_c - 2.0)
        # share of the KV pool (VRAM left after weights and runtime) the admitted requests
        # hold. A pool cannot be more than full: the allocation that would pass 100% fails,
        # which is the OOM above (the process dies, its requests fail, it restarts).
        pool = cfg.vram_total - cfg.vram_weights - cfg.vram_runtime
        kv_ratio = np.minimum(cfg.vram_per_request * mult * in_flight * up / pool, 1.0)

        rec.inst(
            t,
            arrivals=arrivals / dt,
            served=ok / dt,
            finished=served / dt,
            errors=errors / dt,
            rejected=rejected / dt,
            timeouts=timeouts / dt,
            lost=lost,
            queue=waiting * up,
            queue_wait=queue_wait,
            dep_s=dep_s,
            hot_s=np.full(m, hot),
            service_s=service_s,
            batch_size=np.where(rate > 0, b.batch_size, 0.0),
            batch_s=b.batch_s,
            batch_wait_max=b.wait_max_s,
            window=b.window_s,
            gpu_util=total_util,
            in_flight=in_flight * up,
            workers=workers,
            vram=np.minimum(np.where(up, device, drv.other_vram[t]), cfg.vram_total),
            vram_ours=ours * up,
            kv_ratio=kv_ratio,
            oom=oom.astype(np.float64),
            crash=crash.astype(np.float64),
            # a planned restart (a deploy's SIGTERM), not a crash: Kubernetes replaces the pod
            deployed=(up & drv.restart[t]).astype(np.float64),
            restarts=restarts.copy(),
            up=up.astype(np.float64),
            # the balancer's share for it (0: taken out of rotation while its process runs; on
            # Kubernetes a readiness probe that fails takes the pod out of the endpoints)
            in_rotation=(drv.lb_weight[t] > 0).astype(np.float64),
            # the scrape at the step's end: a process that stops by itself (a failed allocation
            # is a CUDA OOM exception, a deploy is SIGTERM) fails its requests, counts them and
            # answers that scrape before it exits; a fatal Xid kills it outright
            alive=(up & ~fatal).astype(np.float64),
            generation=restarts - crash,
            started=ran_since,
            rss=rss,
            memkill=memkill.astype(np.float64),
            load_time=load_time.copy(),
            gpu_processes=1.0 + (drv.other_vram[t] > 0),
            temp=th.temp_c.copy(),
            clock=th.clock_ratio * cfg.sm_clock_nominal_mhz,
            power=power,
            throttle=throttle.astype(np.float64),
            xid=xid_last.copy(),
            ecc=ecc.copy(),
            pcie_rate=drv.pcie_replay_rate[t],
            gc_rate=g.collections_per_s * up,
            gc_pause_s=g.pause_s,
            gc_ratio=g.pause_ratio * up,
            cpu_util=c.util,
            cpu_pressure=c.pressure,
            cpu_cores=c.cores_used * up,
            cpu_stretch=c.stretch,
            disk_util=disk.util,
            disk_await=disk.await_s,
            disk_queue=disk.queue,
            disk_writes=disk.writes_per_s,
            disk_stall=disk.stall_s,
            io_pressure=disk.io_pressure,
            retrans=net.retrans_ratio,
            segments=net.segments_per_s,
            p_net_stall=net.p_request_stall,
            nic_drops=net.nic_drops_per_s,
        )
        rec.fleet(
            t,
            offered=float(offered),
            hit=dep.hit_ratio,
            evictions=dep.evictions_per_s,
            cache_mem=dep.cache_mem_ratio,
            cache_cmd=dep.cache_cmd_s,
            concurrent_loads=dep.concurrent_loads,
            joins=dep.singleflight_joins_per_s,
            hot_missing=dep.hot_missing,
            hot_wait=dep.hot_wait_s,
            vector_qps=dep.vector_qps,
            p_fault=dep.vector_p_fault,
            resident_median=dep.vector_resident_median_s,
            fault_median=dep.vector_fault_median_s,
            vector_mean=dep.vector_mean_s,
            vector_queue_wait=dep.vector_queue_wait_s,
            major_faults=dep.vector_major_faults_per_s,
            resident=dep.vector_resident_ratio,
            swap_used=dep.vector_swap_used_ratio,
            vector_disk_util=dep.vector_disk_util,
            vector_disk_await=dep.vector_disk_await_s,
            vector_cpu=dep.vector_cpu_util,
        )
        q = q_next
    return rec.trace
