"""Each scenario's signature must emerge from the mechanism (and healthy runs must stay quiet)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from infersight.lab.sim import SimResult
from infersight.lab.sim.traffic import hour_of_day

pytestmark = pytest.mark.sim

Run = Callable[..., SimResult]


def rows(res: SimResult, signal: str, instances: tuple[str, ...] | None = None) -> np.ndarray:
    s = res.frame.get(signal)
    assert s is not None, signal
    if instances is None:
        return s.values
    return s.values[[s.instances.index(i) for i in instances]]


def before_after(
    res: SimResult, signal: str, instances: tuple[str, ...] | None = None, minutes: float = 120
) -> tuple[float, float]:
    """Median in the `minutes` before the onset and the `minutes` after it."""
    assert res.truth.onset is not None
    v = rows(res, signal, instances)
    k = res.frame.index_of(res.truth.onset)
    w = int(minutes * 60 / res.frame.step)
    return float(np.nanmedian(v[:, max(0, k - w) : k])), float(np.nanmedian(v[:, k : k + w]))


def after(res: SimResult, signal: str, instances: tuple[str, ...] | None = None) -> np.ndarray:
    assert res.truth.onset is not None
    return rows(res, signal, instances)[:, res.frame.index_of(res.truth.onset) :]


def test_vector_db_swap_raises_vector_p99_tenfold_and_lowers_nothing_upstream(run: Run) -> None:
    r = run("vector_db_swap")
    pre, post = before_after(r, "dependency.vector_query_p99", ("vectordb-0",))
    assert post > 10 * pre
    pre_f, post_f = before_after(r, "infra.major_faults", ("vectordb-0",))
    assert post_f > 100 * max(pre_f, 1.0)
    pre99, post99 = before_after(r, "service.e2e_latency_p99")
    assert post99 > 2 * pre99


def test_incident_0217_chain(run: Run) -> None:
    r = run("incident_0217")
    assert set(r.truth.roots) == {"vector_db_swap", "cache_capacity"}
    assert abs(hour_of_day(np.array([r.truth.onset]))[0] - 2.28) < 0.05
    pre, post = before_after(r, "dependency.vector_query_p99", ("vectordb-0",), 60)
    assert post > 10 * pre
    hit_pre, hit_post = before_after(r, "dependency.cache_hit_ratio", ("cache-0",), 60)
    assert hit_pre > 0.9 > 0.7 > hit_post
    p99_pre, p99_post = before_after(r, "access.request_latency_p99", ("gateway-0",), 60)
    assert p99_post > 10 * p99_pre
    busy_pre, busy_post = before_after(r, "service.threadpool_busy_ratio", None, 60)
    assert busy_post > 3 * busy_pre
    vram_pre, vram_post = before_after(r, "inference.gpu_mem_used_ratio", None, 60)
    assert vram_post > vram_pre + 0.05
    assert np.nanmax(after(r, "service.queue_length")) > 100


def test_batch_window_night_p50_above_day_p50(run: Run) -> None:
    r = run("batch_window_starvation")
    p50 = np.nanmedian(after(r, "service.e2e_latency_p50"), axis=0)
    hours = hour_of_day(r.frame.times[r.frame.index_of(r.truth.onset or 0) :])
    night = np.nanmedian(p50[(hours >= 1) & (hours < 5)])
    day = np.nanmedian(p50[(hours >= 12) & (hours < 16)])
    assert night > 1.05 * day
    # the healthy fleet shows the opposite (or nothing): the window is the cause
    h = run("healthy_diurnal")
    hp50 = np.nanmedian(rows(h, "service.e2e_latency_p50"), axis=0)
    hh = hour_of_day(h.frame.times)
    assert np.nanmedian(hp50[(hh >= 1) & (hh < 5)]) < 1.1 * np.nanmedian(
        hp50[(hh >= 12) & (hh < 16)]
    )


def test_traffic_surge_queue_up_with_gpu_saturated(run: Run) -> None:
    r = run("traffic_surge")
    util = np.nanmedian(after(r, "inference.gpu_util")[:, 25:55])
    assert util > 0.95
    assert np.nanmedian(after(r, "service.queue_length")[:, 25:55]) > 10
    assert np.nanmax(after(r, "inference.oom_rate")) == 0  # a surge is not a bug


def test_threadpool_too_small_queue_up_gpu_underfed(run: Run) -> None:
    r = run("threadpool_too_small")
    k = r.frame.index_of(r.truth.onset or 0)
    q = rows(r, "service.queue_length")[:, k:]
    util = rows(r, "inference.gpu_util")[:, k:]
    busy = rows(r, "service.threadpool_busy_ratio")[:, k:]
    queued = q > 50
    assert queued.any()
    assert np.nanmedian(util[queued]) < 0.8 and np.nanmedian(busy[queued]) > 0.99


def test_threadpool_too_large_holds_vram_and_ooms(run: Run) -> None:
    r = run("threadpool_too_large")
    assert np.nanmax(after(r, "inference.oom_rate")) > 0
    assert np.nanmedian(after(r, "service.threadpool_busy_ratio")) < 0.05


def test_unbounded_queue_grows_past_timeout(run: Run) -> None:
    r = run("unbounded_queue")
    assert np.nanmax(after(r, "service.queue_wait_avg")) > r.config.client_timeout_s
    assert np.nanmax(after(r, "service.error_ratio")) > 0.9
    assert np.nanmax(after(r, "service.rejection_rate")) == 0


def test_vram_leak_climbs_then_oom_restart(run: Run) -> None:
    r = run("vram_leak")
    inst = r.truth.instances
    assert np.nanmax(after(r, "inference.oom_rate", inst)) > 0
    assert np.nanmax(after(r, "service.restarts", inst)) >= 1
    others = tuple(i for i in ("node-0", "node-1", "node-2", "node-3") if i not in inst)
    assert np.nanmax(after(r, "inference.oom_rate", others)) == 0


def test_vram_oom_cascade_spreads(run: Run) -> None:
    r = run("vram_oom_cascade")
    ooms = np.nansum(after(r, "inference.oom_rate") > 0, axis=1)
    assert (ooms > 0).sum() >= 2


def test_shared_gpu_two_processes_more_vram(run: Run) -> None:
    r = run("shared_gpu_contention")
    inst = r.truth.instances
    assert np.nanmax(after(r, "inference.gpu_processes", inst)) == 2
    pre, post = before_after(r, "inference.gpu_mem_used_ratio", inst)
    assert post > pre + 0.1


def test_thermal_throttle_lowers_clock_above_threshold(run: Run) -> None:
    r = run("gpu_thermal_throttling")
    inst = r.truth.instances
    temp = after(r, "infra.gpu_temp_c", inst)
    clock = after(r, "infra.gpu_sm_clock_mhz", inst)
    hot = temp > r.config.throttle_temp_c
    assert hot.any()
    assert np.nanmedian(clock[hot]) < 0.97 * r.config.sm_clock_nominal_mhz
    cool = rows(r, "infra.gpu_temp_c") < r.config.throttle_temp_c - 5
    assert np.all(rows(r, "infra.gpu_sm_clock_mhz")[cool] == r.config.sm_clock_nominal_mhz)


def test_hardware_fault_xid_and_ecc_on_one_machine(run: Run) -> None:
    r = run("gpu_hardware_fault")
    (inst,) = r.truth.instances
    assert np.nanmax(after(r, "infra.gpu_xid", (inst,))) == 48
    assert np.nanmax(after(r, "infra.gpu_ecc_dbe", (inst,))) > 0
    others = tuple(i for i in ("node-0", "node-1", "node-2", "node-3") if i != inst)
    assert np.nanmax(rows(r, "infra.gpu_xid", others)) == 0


def test_slow_instance_is_a_fleet_outlier(run: Run) -> None:
    r = run("slow_instance")
    (inst,) = r.truth.instances
    fwd = np.nanmedian(after(r, "inference.forward_time_avg"), axis=1)
    names = r.frame.series["inference.forward_time_avg"].instances
    assert names[int(np.argmax(fwd))] == inst
    assert np.max(fwd) > 1.3 * np.median(fwd)


def test_retransmits_stretch_the_tail_only(run: Run) -> None:
    r = run("network_retransmits")
    inst = r.truth.instances
    _, retr = before_after(r, "infra.tcp_retrans_ratio", inst)
    assert retr > 0.003
    p99_pre, p99_post = before_after(r, "service.e2e_latency_p99", inst)
    p50_pre, p50_post = before_after(r, "service.e2e_latency_p50", inst)
    assert p99_post > 2 * p99_pre and p50_post < 1.5 * p50_pre


def test_cold_start_from_remote_storage(run: Run) -> None:
    r = run("model_cold_start")
    assert np.nanmax(after(r, "inference.model_load_time")) > 120
    assert np.nanmin(after(r, "infra.target_up")) == 0


def test_log_disk_io(run: Run) -> None:
    r = run("log_disk_io")
    pre, post = before_after(r, "infra.disk_util")
    assert post > pre + 0.3
    pre_l, post_l = before_after(r, "service.e2e_latency_p50")
    assert post_l > pre_l


def test_lb_removed_skews_traffic_while_up(run: Run) -> None:
    r = run("lb_instance_removed")
    gone = r.truth.instances
    assert np.nanmax(after(r, "service.request_rate", gone)[:, 2:]) == 0
    assert np.nanmin(after(r, "infra.target_up", gone)) == 1
    kept = tuple(i for i in ("node-0", "node-1", "node-2", "node-3") if i not in gone)
    pre, post = before_after(r, "service.request_rate", kept, 15)
    assert post > 1.2 * pre


def test_gc_pauses(run: Run) -> None:
    r = run("gc_pauses")
    pre, post = before_after(r, "service.gc_pause_ratio")
    assert post > 5 * pre
    pre99, post99 = before_after(r, "service.e2e_latency_p99")
    assert post99 > 2 * pre99


def test_cache_capacity_drops_hit_ratio(run: Run) -> None:
    r = run("cache_capacity")
    pre, post = before_after(r, "dependency.cache_hit_ratio", ("cache-0",))
    assert pre > 0.9 and post < 0.8
    ev_pre, ev_post = before_after(r, "dependency.cache_evictions", ("cache-0",))
    assert ev_post > 10 * ev_pre


def test_cache_stampede_concurrent_loads(run: Run) -> None:
    r = run("cache_stampede")
    assert np.nanmax(after(r, "dependency.cache_concurrent_loads", ("cache-0",))) > 20
    assert np.nanmax(after(r, "dependency.vector_query_p99", ("vectordb-0",))) > 0.5


def test_max_batch_too_large(run: Run) -> None:
    r = run("max_batch_too_large")
    assert np.nanmax(after(r, "inference.batch_size")) > 16
    assert np.nanmax(after(r, "inference.forward_time_p99")) > 0.2


def test_healthy_runs_stay_within_day_over_day_noise(run: Run) -> None:
    for name in ("healthy_diurnal", "healthy_flat", "healthy_spiky"):
        r = run(name)
        assert r.truth.roots == ()
        assert np.nanmax(rows(r, "inference.oom_rate")) == 0
        assert np.nanmax(rows(r, "service.error_ratio")) < 0.01
        # hour 2 of the second day against hour 2 of the first: same hourly medians ±25%
        t = r.frame.times
        day = ((t - t[0]) // 86400).astype(int)
        hours = hour_of_day(t).astype(int)
        for sig in ("service.request_rate", "service.e2e_latency_p99", "inference.gpu_util"):
            v = np.nanmedian(rows(r, sig), axis=0)
            for h in (0, 1):
                a = np.nanmedian(v[(day == 0) & (hours == h)])
                b = np.nanmedian(v[(day == 1) & (hours == h)])
                assert abs(a - b) <= 0.25 * a, (name, sig, h, a, b)
