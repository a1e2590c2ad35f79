"""Per-scenario diagnosis on the simulator, read through exporter dialects (6 nodes, 1 seed)."""

from __future__ import annotations

from functools import cache
from typing import Any

import pytest

from infersight.diagnose import Diagnosis, diagnose
from infersight.lab.evaluate.scenario_windows import alert_time, healthy_times, windows_at
from infersight.lab.sim import SimResult, simulate

pytestmark = pytest.mark.sim

RESTARTS = "service.restarts"


@cache
def _sim(scenario: str, seed: int = 0) -> SimResult:
    return simulate(scenario, hours=26, instances=6, seed=seed, step=60.0)


def _diag(scenario: str, dialect: str = "vllm", seed: int = 0) -> Diagnosis:
    res = _sim(scenario, seed)
    return diagnose(windows_at(res, dialect, alert_time(res)))


VLLM_FIRST = [
    "batch_window_starvation", "cache_capacity", "gc_pauses", "gpu_hardware_fault",
    "gpu_thermal_throttling", "lb_instance_removed", "log_disk_io", "max_batch_too_large",
    "network_retransmits", "shared_gpu_contention", "slow_instance", "threadpool_too_small",
    "traffic_surge", "unbounded_queue", "vector_db_swap", "vram_leak", "vram_oom_cascade",
]  # fmt: skip
NATIVE_FIRST = [
    "batch_window_starvation", "cache_capacity", "cache_stampede", "gc_pauses",
    "gpu_hardware_fault", "gpu_thermal_throttling", "lb_instance_removed", "log_disk_io",
    "max_batch_too_large", "model_cold_start", "network_retransmits", "shared_gpu_contention",
    "slow_instance", "threadpool_too_large", "threadpool_too_small", "traffic_surge",
    "unbounded_queue", "vector_db_swap", "vram_leak", "vram_oom_cascade",
]  # fmt: skip


#: right-root-first cases the request-path walk lost (issue 37's open work, measured in its
#: note): strict, so each one that is answered right again fails here until its mark goes
REGRESSED = {
    ("shared_gpu_contention", 3, "vllm"), ("vram_leak", 17, "native"),
    ("cache_stampede", 15, "native"), ("vram_oom_cascade", 53, "vllm"),
}  # fmt: skip
LOST = pytest.mark.xfail(strict=True, reason="lost by the request-path walk (issue 37)")


def _known(case: tuple[str, int, str]) -> Any:
    return pytest.param(*case, marks=LOST) if case in REGRESSED else case


def _first(scenario: str, dialect: str) -> Any:
    return pytest.param(scenario, marks=LOST) if (scenario, 0, dialect) in REGRESSED else scenario


@pytest.mark.parametrize("scenario", [_first(s, "vllm") for s in VLLM_FIRST])
def test_right_root_first_vllm(scenario: str) -> None:
    dx = _diag(scenario)
    assert [r.hypothesis for r in dx.root_causes][:1] == [scenario], dx.summary


@pytest.mark.parametrize("scenario", [_first(s, "native") for s in NATIVE_FIRST])
def test_right_root_first_native(scenario: str) -> None:
    dx = _diag(scenario, "native")
    assert [r.hypothesis for r in dx.root_causes][:1] == [scenario], dx.summary


@pytest.mark.parametrize(
    ("scenario", "seed", "dialect"),
    [
        # a second process fills the card, our engine crash-loops and loses traffic: not an LB fault
        ("shared_gpu_contention", 2, "triton"),
        # whole-card VRAM from dcgm-exporter alternates while the engine restarts
        _known(("shared_gpu_contention", 3, "vllm")),
        # one machine slower than its own past while its peers are not: no fleet outlier needed
        ("slow_instance", 4, "native"),
        # a slow machine backs up and fills its VRAM an hour after it slowed: no second process
        # (the memory and the slowdown did not begin together), no leak (batches got slower)
        ("slow_instance", 12, "vllm"),
        # a busier, slower node flickers into a throttle state at its hottest minutes: an
        # effect of its work, not a clock held down
        ("slow_instance", 15, "vllm"),
        # the second process was there before the window: above its peers, not its own past
        ("shared_gpu_contention", 19, "vllm"),
        # the throttled clock began an hour before the load made it matter
        ("gpu_thermal_throttling", 10, "vllm"),
        # the leak ran its course: the process restarted at the top just before the alert
        _known(("vram_leak", 17, "native")),
        # the whole fleet filled at once: a slight drift on two cards is not what filled them
        ("vram_oom_cascade", 6, "tgi"),
        ("vram_oom_cascade", 16, "vllm"),
        # one instance out of rotation sends its share to the rest: no surge of requests
        ("lb_instance_removed", 15, "vllm"),
        # a stalled server's completed-request rate falls to zero while its queue fills: it was
        # not taken out of the load balancer
        ("threadpool_too_small", 17, "tgi"),
        # stampedes every 24 min since before the window: a chronic cause, dated by its first
        _known(("cache_stampede", 15, "native")),
        # the morning ramp raised traffic everywhere, yet one card's memory alone climbed: the
        # traffic does not explain it
        ("vram_leak", 24, "vllm"),
        # Triton keeps counting the wait of requests whose clients gave up: the queue shows
        ("unbounded_queue", 24, "triton"),
        # the batches that OOMed are not read (counters restarted), those before them only grew
        # half again, but each pass took 2.5x as long: past the knee, not longer inputs
        ("max_batch_too_large", 9, "triton"),
        ("max_batch_too_large", 11, "native"),
        # a slow card runs hot and its driver trims the clock 1.5%: batches 1.6x slower than
        # the fleet's are not the clock's doing (TGI: the mean pass from its histogram's sum)
        ("slow_instance", 25, "vllm"),
        ("slow_instance", 25, "tgi"),
        # a slow card backs up and fills its memory 2.5 h after it slowed: its batch time was
        # above its peers' long before the memory rose, so no second process came with it
        ("slow_instance", 26, "vllm"),
        # a night burst 1.66x on half the fleet while batches grew 4.8x and the GPU idled more:
        # more traffic would have busied the GPU, the batches wait on the window
        ("batch_window_starvation", 34, "vllm"),
        # a burst grew every replica's batches, one card's tail tripled for a few minutes and
        # the others' doubled: a fleet-wide cap costs on more than one card, so the OOMs are
        # the lost headroom's, not the cap's
        ("vram_oom_cascade", 32, "native"),
        # a 7x surge landed on a morning ramp already in the window: the window's level of
        # requests is the ramp's (1.5x), the step at the onset is the surge's
        ("traffic_surge", 42, "vllm"),
        # two instances left the load balancer four hours before the alert: nothing changed
        # against their own past in the window, but they serve nothing while their peers do
        ("lb_instance_removed", 42, "vllm"),
        # a slow card's mean batch time was above its peers' from 12:02; its tail and memory
        # rose together at 14:31 with a backlog: the slowdown did not come with the memory
        ("slow_instance", 42, "native"),
        # every replica's batches (and whole-card memory) grew with the cap: too few cards
        # stayed as they were for a second process on some of them
        ("max_batch_too_large", 40, "triton"),
        # the second process came hours before the window (its memory above the peers' from
        # the first point) and slowed the batches only when the evening load met it: when it
        # came is unknown, so the slowdown is not "apart" from it
        ("shared_gpu_contention", 48, "vllm"),
        # the same, where the batches stayed within detection's floors of their past: the card
        # fuller and busier than its peers' with our batches as before is another process, and
        # a leak takes no GPU time
        ("shared_gpu_contention", 48, "tgi"),
        # a tail sitting on a histogram bucket bound flapped 100 -> 166 ms two hours before a
        # surge pinned the GPUs: saturation is read while the surge lasts, not since the flap
        ("traffic_surge", 49, "native"),
        ("unbounded_queue", 49, "native"),
        # the saturation read while the queue waited does not date the queue after the surge
        # it let through: the unbounded queue stays the root, the surge on its chain
        ("unbounded_queue", 23, "triton"),
        # the mean batch peaked 1.3-1.4x its earlier peak (the largest batches came with the
        # restarts, not read) while each pass at its worst took 2.5x as long: each item cost
        # more, the batches were past the knee — not longer inputs on the old cap
        ("max_batch_too_large", 12, "triton"),
        ("max_batch_too_large", 38, "triton"),
        ("max_batch_too_large", 50, "triton"),
        # two cards of six OOMed at the burst; the other four peaked at 81-84% against ~71%
        # before: the headroom was gone fleet-wide, not on one card
        _known(("vram_oom_cascade", 53, "vllm")),
        # the request rate crept over its band on the morning ramp two hours before the surge
        # and detection ran both together: the surge is "1.5x" since it got that big, so the
        # unbounded queue that let it through is not dated after it
        ("unbounded_queue", 50, "vllm"),
        # one card slowed 2.5x half an hour before the alert, too short a share of a 3 h window
        # for a fleet outlier; the morning ramp lifted every card's traffic 1.4x over the hour
        # before, so "no more traffic" is read against its peers, not its own past
        ("slow_instance", 57, "vllm"),
        ("slow_instance", 59, "native"),
        # the second process's memory came at 12:54, the users' latency left its band at
        # 12:55: that first peak belongs to the incident, not to the peak before it
        ("shared_gpu_contention", 56, "vllm"),
        # a second process came at 11:52 and slowed its two cards at 11:53, while latency
        # began to climb elsewhere at 11:04: comparing the slow cards with their peers over
        # the incident dates nothing, so they stay explained by the process
        ("shared_gpu_contention", 34, "native"),
        # the second process filled node-0 and node-2; node-0 was pinned at 100% busy and
        # crash-looped, so only node-2 read as busier: the "other" cards whose memory must be
        # unchanged are those without the memory step, not every card but node-2
        ("shared_gpu_contention", 64, "triton"),
        # the disk got busy at 08:17 and every request has been 22% slower since, yet no
        # user-facing signal left its band, so the incident's onset is the window's start:
        # the slowdown is read since the disk's change
        ("log_disk_io", 25, "vllm"),
        ("log_disk_io", 58, "tgi"),
        # collections 14x as frequent since 09:29 and the typical request 30% slower since,
        # while a traffic step at 08:10 dated the incident: read since the collections grew
        ("gc_pauses", 66, "vllm"),
        # Triton reports queue time only as a cumulative total: a pool too small shows as the
        # mean wait per request, for six minutes of a traffic peak
        ("threadpool_too_small", 73, "triton"),
        # a traffic bump at 11:10 was served and gone by 11:25; the surge into the unbounded
        # queue came at 11:40: the surge is dated from then, so the queue explains it
        ("unbounded_queue", 74, "vllm"),
        # the card got hot at 12:18 and throttled from 12:20; a second process's memory was
        # read at 13:55: the heat is dated when it began, not "above 80 °C since the onset"
        ("gpu_thermal_throttling", 73, "tgi"),
        # batches past the knee filled every card at 09:13 (all six OOMed and restarted); two
        # also held the memory long enough to read as a step, but the cards without it
        # peaked at 100% too: the fleet's own work, not a tenant on two cards
        ("max_batch_too_large", 74, "triton"),
        # a burst OOMed all six cards at 11:08 and crash-looped them; each pass's tail ran 7x
        # its baseline since the incident began, while a 1.4x flap across a histogram bucket
        # bound since 08:50 had the excursion's own median at 1.9x: sized by the incident
        ("max_batch_too_large", 59, "native"),
        # the morning ramp held the request rate at 1.46x for an hour, with odd readings past
        # 1.5x; the surge quadrupled it at 09:41: dated then, not by the ramp's odd reading,
        # so the unbounded queue that let it through is not put after it
        ("unbounded_queue", 42, "native"),
    ],
)
def test_right_root_first_hard_seeds(scenario: str, seed: int, dialect: str) -> None:
    dx = _diag(scenario, dialect, seed=seed)
    assert [r.hypothesis for r in dx.root_causes][:1] == [scenario], dx.summary


def test_a_burst_that_crashes_the_servers_does_not_clear_the_batch_cap() -> None:
    """A 2.5x burst pinned the GPUs, and batches 8x their earlier peak OOMed and restarted every
    replica: a cap that fits the card queues a surge, it does not crash on it. The surge is a
    root (it came first), the cap is one beside it, not refuted by it."""
    dx = _diag("max_batch_too_large", "vllm", seed=31)
    h = dx.hypothesis("max_batch_too_large")
    assert h is not None and h.verdict == "confirmed", dx.summary
    assert "max_batch_too_large" in [r.hypothesis for r in dx.root_causes][:3]


def test_missing_signal_is_inconclusive_and_named_upstream() -> None:
    """vLLM's stack exports no per-key cache loads: the stampede cannot be decided. The vector
    DB it overloads is slow, and the report names the stampede as a possible cause upstream of
    that root which could not be checked, with the signal to add."""
    dx = _diag("cache_stampede")
    h = dx.hypothesis("cache_stampede")
    assert h is not None and h.verdict == "inconclusive"
    assert "dependency.cache_concurrent_loads" in h.missing_signals
    assert "vector_db_slow" in [r.hypothesis for r in dx.root_causes]
    (u,) = [u for u in dx.unchecked_causes if u.hypothesis == "cache_stampede"]
    assert "vector_db_slow" in u.would_explain
    assert u.missing == ("dependency.cache_concurrent_loads",)
    assert "Could not check Cache stampede" in dx.summary
    assert any("dependency.cache_concurrent_loads" in a for a in dx.next_actions[:4])


def test_native_metrics_decide_the_stampede_and_name_nothing_unchecked() -> None:
    dx = _diag("cache_stampede", "native")
    assert [r.hypothesis for r in dx.root_causes][:1] == ["cache_stampede"]
    assert not any(u.hypothesis == "cache_stampede" for u in dx.unchecked_causes)


@pytest.mark.parametrize("dialect", ["vllm", "tgi"])
def test_cold_start_without_a_load_time_metric(dialect: str) -> None:
    """vLLM and TGI do not export the model load time; a restarted target that took minutes to
    answer its scrapes again is the load."""
    dx = _diag("model_cold_start", dialect)
    assert [r.hypothesis for r in dx.root_causes][:1] == ["model_cold_start"], dx.summary
    h = dx.hypothesis("model_cold_start")
    assert h is not None
    assert any(e.signal == "infra.target_up" and "came back" in e.statement for e in h.evidence)


@pytest.mark.parametrize("dialect", ["tgi", "triton"])
def test_oom_cascade_from_counter_resets(dialect: str) -> None:
    """No OOM counter and no process start time: restarts are read from counter resets."""
    dx = _diag("vram_oom_cascade", dialect)
    assert [r.hypothesis for r in dx.root_causes][:1] == ["vram_oom_cascade"], dx.summary
    h = dx.hypothesis("vram_oom_cascade")
    assert h is not None and any(e.signal == "service.restarts" for e in h.evidence)


@pytest.mark.parametrize("dialect", ["vllm", "triton", "tgi", "native"])
def test_incident_0217_has_both_roots_and_the_chain(dialect: str) -> None:
    dx = _diag("incident_0217", dialect, seed=3)
    top2 = {r.hypothesis for r in dx.root_causes[:2]}
    assert top2 == {"vector_db_swap", "cache_capacity"}, dx.summary
    chains = [r.chain for r in dx.root_causes[:2]]
    assert any("queue_backlog" in c for c in chains)
    # bigger batches at a slower GPU are the backlog's effect (seed §5.2), not a second root
    h = dx.hypothesis("batch_window_starvation")
    assert h is not None and not h.is_root


def test_evidence_dates_onsets_on_the_clock() -> None:
    dx = _diag("incident_0217", seed=3)
    h = dx.hypothesis("vector_db_swap")
    assert h is not None
    texts = [e.statement for e in h.evidence if e.kind == "deviation"]
    assert texts and all(" UTC" in t and "window's end" not in t for t in texts), texts


@pytest.mark.parametrize("dialect", ["vllm", "triton"])
def test_healthy_day_is_healthy(dialect: str) -> None:
    res = _sim("healthy_diurnal")
    for at in healthy_times(res, 2):
        dx = diagnose(windows_at(res, dialect, at))
        assert not dx.root_causes, dx.summary
