"""The engine on synthetic frames: verdicts, missing signals, chains and ranking."""

from __future__ import annotations

import time

import numpy as np
import pytest
from diagnose_frames import ONSET, START, STEP, N
from diagnose_frames import step_frame as _frame

from infersight.diagnose import diagnose
from infersight.diagnose.chain import chain, edges, roots
from infersight.diagnose.config import DEFAULT_CONFIG as CFG
from infersight.diagnose.context import Context, row_medians
from infersight.diagnose.kb import load_kb
from infersight.diagnose.rank import Candidate, order
from infersight.frame import MetricFrame, SignalSeries

NODES = ("node-0", "node-1", "node-2", "node-3")


def _fleet(a: float, b: float) -> dict[str, tuple[float, float]]:
    return {n: (a, b) for n in NODES}


def _vector_incident(with_faults: bool = True) -> dict[str, dict[str, tuple[float, float]]]:
    spec = {
        "service.e2e_latency_p99": _fleet(0.4, 4.0),
        "service.queue_length": _fleet(3.0, 80.0),
        "inference.gpu_util": _fleet(0.7, 0.4),
        "dependency.vector_query_p99": {"vectordb-0": (0.02, 0.8)},
        "infra.gpu_temp_c": _fleet(60.0, 60.0),
        "infra.gpu_sm_clock_mhz": _fleet(1800.0, 1800.0),
    }
    if with_faults:
        spec["infra.major_faults"] = {"vectordb-0": (2.0, 5000.0), **_fleet(1.0, 1.0)}
    return spec


def test_confirmed_refuted_inconclusive() -> None:
    dx = diagnose({"incident": _frame(_vector_incident())})
    vec = dx.hypothesis("vector_db_swap")
    assert vec is not None and vec.verdict == "confirmed" and vec.instances == ("vectordb-0",)
    assert any(
        e.signal == "infra.major_faults" and e.instance == "vectordb-0" for e in vec.evidence
    )
    ev = next(e for e in vec.evidence if e.signal == "dependency.vector_query_p99")
    assert ev.baseline is not None and ev.observed is not None and ev.observed > 10 * ev.baseline
    assert ev.unit == "s" and "vectordb-0" in ev.statement
    thermal = dx.hypothesis("gpu_thermal_throttling")
    assert thermal is not None and thermal.verdict == "refuted"
    gc = dx.hypothesis("gc_pauses")
    assert gc is not None and gc.verdict == "inconclusive"
    assert "service.gc_pause_ratio" in gc.missing_signals
    assert dx.root_causes[0].hypothesis == "vector_db_swap"
    assert not dx.healthy
    assert any("vector" in a.lower() for a in dx.next_actions)


def test_missing_signal_is_never_healthy() -> None:
    dx = diagnose({"incident": _frame(_vector_incident(with_faults=False))})
    vec = dx.hypothesis("vector_db_swap")
    assert vec is not None and vec.verdict == "inconclusive"
    assert "infra.major_faults" in vec.missing_signals
    assert "infra.major_faults" in dx.missing_signals


def test_chain_from_root_to_symptoms() -> None:
    dx = diagnose({"incident": _frame(_vector_incident())})
    rc = dx.root_causes[0]
    assert rc.chain[0] == "vector_db_swap" and "queue_backlog" in rc.chain
    q = dx.hypothesis("queue_backlog")
    assert q is not None and "vector_db_swap" in q.explained_by


def test_healthy_says_so() -> None:
    spec = {k: {i: (v[0], v[0]) for i, v in per.items()} for k, per in _vector_incident().items()}
    dx = diagnose({"incident": _frame(spec)})
    assert dx.healthy and not dx.root_causes and "Nothing is wrong" in dx.summary
    assert dx.to_dict()["healthy"] is True


def test_healthy_summary_names_a_notable_change() -> None:
    from infersight.detect import detect
    from infersight.diagnose.result import UnexplainedChange
    from infersight.diagnose.summary import summarize

    spec = {k: {i: (v[0], v[0]) for i, v in per.items()} for k, per in _vector_incident().items()}
    det = detect({"incident": _frame(spec)})
    hot = UnexplainedChange(
        "infra.gpu_temp_c", "node-1", "infrastructure", CFG.notable_shift + 2.5,
        "infra.gpu_temp_c on node-1 changed (deviation, up): 60 °C → 80 °C, shift 7.5 σ; "
        "no known failure mode explains it",
    )  # fmt: skip
    text = summarize(True, [], {}, [hot], det)
    assert text.startswith("No incident") and "Nothing is wrong" not in text
    assert text.endswith("Worth a look: infra.gpu_temp_c on node-1 changed (deviation, up): "
                         "60 °C → 80 °C, shift 7.5 σ.")  # fmt: skip


def test_roots_skip_explained_causes_and_rank_by_onset_then_strength() -> None:
    kb = load_kb()
    conf = {r: kb.get(r) for r in ("gpu_thermal_throttling", "slow_instance", "latency_high")}
    rules = {k: v for k, v in conf.items() if v is not None}
    g = edges(rules)
    assert roots(rules, g) == ["gpu_thermal_throttling"]
    assert chain(g, "gpu_thermal_throttling") == (
        "gpu_thermal_throttling",
        "slow_instance",
        "latency_high",
    )
    early, late = Candidate("a", 0.0, 0.5), Candidate("b", 3600.0, 0.9)
    assert [c.id for c in order([late, early])] == ["a", "b"]
    tie = Candidate("c", 60.0, 0.9)
    assert [c.id for c in order([early, tie])] == ["c", "a"]


def test_a_cause_that_began_well_after_its_effect_does_not_explain_it() -> None:
    kb = load_kb()
    rules = {r: kb.get(r) for r in ("max_batch_too_large", "vram_oom_cascade")}
    conf = {k: v for k, v in rules.items() if v is not None}
    in_order = edges(conf, {"max_batch_too_large": 0.0, "vram_oom_cascade": 120.0})
    assert roots(conf, in_order) == ["max_batch_too_large"]
    # batches swelled 20 min after the OOMs began: they are the cascade's backlog, not its cause
    late = edges(conf, {"max_batch_too_large": 1260.0 + CFG.late_s, "vram_oom_cascade": 1200.0})
    assert "vram_oom_cascade" not in late["max_batch_too_large"]
    assert set(roots(conf, late)) == {"max_batch_too_large", "vram_oom_cascade"}
    # within the tolerance (detectors date ramps late) the edge stays
    near = edges(conf, {"max_batch_too_large": 1200.0 + CFG.late_s, "vram_oom_cascade": 1201.0})
    assert "vram_oom_cascade" in near["max_batch_too_large"]


def _outage_frame(down_steps: int, back: bool) -> dict[str, MetricFrame]:
    f = _frame(_vector_incident())
    up = np.ones((len(NODES), f.n))
    end = ONSET + 5 + down_steps
    up[1, ONSET + 5 : end if back else f.n] = 0.0
    restarts = np.zeros_like(up)
    if back:
        restarts[1, end : end + 5] = 1.0
    series = dict(f.series)
    series["infra.target_up"] = SignalSeries(NODES, up)
    series["service.restarts"] = SignalSeries(NODES, restarts)
    return {"incident": MetricFrame(f.start, f.step, f.n, series)}


def test_outage_state_reads_how_long_a_restart_took_to_serve() -> None:
    from infersight.detect import detect
    from infersight.diagnose.conditions import eval_condition
    from infersight.diagnose.context import Context
    from infersight.diagnose.kb import Condition

    cond = Condition(signal="infra.target_up", state="outage", level=90)

    def held(down_steps: int, back: bool) -> tuple[bool | None, str]:
        w = _outage_frame(down_steps, back)
        ctx = Context.build(w["incident"], detect(w), ("service.e2e_latency_p99",))
        o = eval_condition(ctx, cond, None)
        return o.truth, " ".join(e.statement for e in o.evidence)

    truth, text = held(4, back=True)  # 4 one-minute samples down, then up again
    assert truth is True and "node-1 was down (up = 0) for 4 min" in text and "came back" in text
    assert held(1, back=True)[0] is False  # a reload from local disk
    assert held(30, back=False)[0] is False  # still down: that is `absent`, not a slow start


def test_outage_state_reads_its_own_signal() -> None:
    from infersight.diagnose.kb import Condition

    with pytest.raises(ValueError, match=r"reads infra\.target_up"):
        Condition(signal="service.restarts", state="outage", level=90)
    with pytest.raises(ValueError, match="needs a level"):
        Condition(signal="infra.target_up", state="outage")


def test_peaks_are_not_read_from_just_after_a_restart() -> None:
    """A crash-looping engine: the first readings after it comes back come from rates of
    counters that restarted and outgrew their old values (a hidden reset), e.g. a mean batch of
    62 where the cap is 16. Peaks skip them; the rest of the row is read as usual."""
    from infersight.detect import detect
    from infersight.diagnose.conditions import eval_condition
    from infersight.diagnose.context import Context
    from infersight.diagnose.kb import Condition

    f = _frame(_vector_incident())
    up = np.ones((len(NODES), f.n))
    batch = np.full((len(NODES), f.n), 4.0)
    down_at = ONSET + 10
    up[:, down_at] = 0.0
    batch[:, down_at] = np.nan
    batch[:, down_at + 1] = 62.0  # the hidden-reset artefact
    series = {
        **f.series,
        "infra.target_up": SignalSeries(NODES, up),
        "inference.batch_size": SignalSeries(NODES, batch),
    }
    w = {"incident": MetricFrame(f.start, f.step, f.n, series)}
    ctx = Context.build(w["incident"], detect(w), ("service.e2e_latency_p99",))
    settled = ctx.settled_row("inference.batch_size", "node-0")
    assert settled is not None
    reach = int(CFG.settle_s // f.step)
    assert np.isnan(settled[down_at : down_at + reach + 1]).all()
    assert settled[down_at + reach + 1] == 4.0 and settled[down_at - 1] == 4.0
    swell = Condition(signal="inference.batch_size", state="up", factor=3, stat="max")
    assert eval_condition(ctx, swell, None).truth is False
    # the same spike well after the restart is a real peak
    batch[:, down_at + reach + 5] = 62.0
    series["inference.batch_size"] = SignalSeries(NODES, batch)
    w = {"incident": MetricFrame(f.start, f.step, f.n, series)}
    ctx = Context.build(w["incident"], detect(w), ("service.e2e_latency_p99",))
    assert eval_condition(ctx, swell, None).truth is True


def _ctx_with(extra: dict[str, np.ndarray]) -> tuple[Context, MetricFrame]:
    from infersight.detect import detect

    f = _frame(_vector_incident())
    series = {**f.series, **{k: SignalSeries(NODES, v) for k, v in extra.items()}}
    w = {"incident": MetricFrame(f.start, f.step, f.n, series)}
    return Context.build(w["incident"], detect(w), ("service.e2e_latency_p99",)), w["incident"]


def test_an_event_just_before_the_users_noticed_is_the_incidents() -> None:
    from infersight.diagnose.conditions import eval_condition
    from infersight.diagnose.kb import Condition

    f = _frame(_vector_incident())
    throttle = np.zeros((len(NODES), f.n))
    lead = int(CFG.event_lead_s // f.step)
    throttle[0, ONSET - lead // 2 :] = 1.0  # began 15 min before the onset
    ctx, _ = _ctx_with({"infra.gpu_throttle": throttle})
    event = Condition(signal="infra.gpu_throttle", state="event")
    o = eval_condition(ctx, event, None)
    assert o.truth is True and o.instances == {"node-0"}
    assert o.onset is not None and o.onset < f.start + ONSET * f.step
    throttle[0, : ONSET - 2 * lead] = 1.0  # it also throttled an hour earlier: nothing new
    ctx, _ = _ctx_with({"infra.gpu_throttle": throttle})
    assert eval_condition(ctx, event, None).truth is False


def test_a_peak_from_zero_is_dated_when_it_begins() -> None:
    from infersight.diagnose.conditions import eval_condition
    from infersight.diagnose.kb import Condition

    f = _frame(_vector_incident())
    ooms = np.zeros((len(NODES), f.n))
    ooms[1, ONSET + 20 :] = 0.01
    ctx, _ = _ctx_with({"inference.oom_rate": ooms})
    o = eval_condition(ctx, Condition(signal="inference.oom_rate", state="up", stat="max"), None)
    assert o.truth is True and o.onset == f.start + (ONSET + 20) * f.step


def test_a_peak_just_before_the_users_noticed_is_the_incidents() -> None:
    """A second process's memory came a minute before the latency left its band: its first
    peak is the incident's, not "the peak before" it. A peak well before the onset still is."""
    from infersight.diagnose.conditions import eval_condition
    from infersight.diagnose.kb import Condition

    f = _frame(_vector_incident())
    up = Condition(signal="inference.gpu_mem_used_bytes", state="up", factor=1.3, stat="max")
    lead = int(CFG.peak_lead_s // f.step)
    for first, holds in ((ONSET - 1, True), (ONSET - 2 * lead, False)):
        mem = np.full((len(NODES), f.n), 57e9)
        mem[2, first::2] = 85e9  # the engine crash-loops: full card, then the other alone
        mem[2, first + 1 :: 2] = 25e9
        ctx, _ = _ctx_with({"inference.gpu_mem_used_bytes": mem})
        o = eval_condition(ctx, up, None)
        assert o.truth is holds, first
        if holds:
            assert o.instances == {"node-2"} and o.onset == f.start + first * f.step


def test_outage_reads_gaps_without_samples_as_unknown_not_down() -> None:
    from infersight.diagnose.conditions import eval_condition
    from infersight.diagnose.kb import Condition

    f = _frame(_vector_incident())
    up = np.ones((len(NODES), f.n))
    up[2, ONSET + 5 : ONSET + 15] = np.nan  # the scraper lost these samples: not an outage
    up[3, ONSET + 5 : ONSET + 7] = 0.0  # two short outages: the longest is what counts
    up[3, ONSET + 20 : ONSET + 24] = 0.0
    ctx, _ = _ctx_with({"infra.target_up": up})
    o = eval_condition(ctx, Condition(signal="infra.target_up", state="outage", level=180), None)
    assert o.truth is True and o.instances == {"node-3"}
    assert "for 4 min" in o.evidence[0].statement


def _stepped(level: tuple[float, float], at: int, n: int) -> np.ndarray:
    """node-0 steps from level[0] to level[1] at grid index `at`; its peers stay put."""
    rows = np.full((len(NODES), n), level[0])
    rows *= 1 + 0.01 * np.random.default_rng(at).standard_normal(rows.shape)
    rows[0, at:] = level[1]
    return rows


def test_when_together_asks_that_two_changes_begin_together() -> None:
    from infersight.diagnose.conditions import eval_group
    from infersight.diagnose.kb import Group

    f = _frame(_vector_incident())
    group = Group.model_validate(
        {
            "all": [
                {"signal": "inference.gpu_mem_used_bytes", "state": "up"},
                {
                    "signal": "inference.forward_time_avg",
                    "state": "up",
                    "where": "same",
                    "when": "together",
                },
            ]
        }
    )
    untimed = Group.model_validate(
        {
            "all": [
                {"signal": "inference.gpu_mem_used_bytes", "state": "up"},
                {"signal": "inference.forward_time_avg", "state": "up", "where": "same"},
            ]
        }
    )
    memory = _stepped((50e9, 70e9), ONSET, f.n)
    apart = ONSET - 2 * int(CFG.together_s // f.step)  # the slowdown came half an hour earlier
    for slow_at, holds in ((ONSET, True), (apart, False)):
        ctx, _ = _ctx_with(
            {
                "inference.gpu_mem_used_bytes": memory,
                "inference.forward_time_avg": _stepped((0.02, 0.06), slow_at, f.n),
            }
        )
        # both changes are found either way: only their timing tells the two apart
        assert eval_group(ctx, untimed).truth is True, slow_at
        o = eval_group(ctx, group)
        assert o.truth is holds, slow_at
        if holds:
            assert o.instances == {"node-0"}
        else:
            assert any("not together" in e.statement for e in o.evidence)


def test_when_after_asks_that_the_effect_not_begin_before_its_cause() -> None:
    """An OOM crash follows the memory filling; a restart before the memory rose (a deploy,
    the model loading back in) is no consequence of it. A change one step early still counts:
    dating is no finer than the grid."""
    from infersight.diagnose.conditions import eval_group
    from infersight.diagnose.kb import Condition, Group

    f = _frame(_vector_incident())
    group = Group.model_validate(
        {
            "all": [
                {"signal": "inference.gpu_mem_used_bytes", "state": "up"},
                {"signal": "inference.forward_time_avg", "state": "up", "where": "same",
                 "when": "after"},
            ]
        }
    )  # fmt: skip
    memory = _stepped((50e9, 70e9), ONSET, f.n)
    for slow_at, holds in ((ONSET + 4, True), (ONSET - 1, True), (ONSET - 20, False)):
        ctx, _ = _ctx_with(
            {
                "inference.gpu_mem_used_bytes": memory,
                "inference.forward_time_avg": _stepped((0.02, 0.06), slow_at, f.n),
            }
        )
        o = eval_group(ctx, group)
        assert o.truth is holds, slow_at
        if not holds:
            assert any("must follow" in e.statement for e in o.evidence)
    with pytest.raises(ValueError, match="where: same"):
        Condition.model_validate(
            {"signal": "inference.forward_time_avg", "state": "up", "when": "after"}
        )


def test_when_together_dates_a_change_by_its_earliest_alternative() -> None:
    """The mean batch time rose half an hour before the memory and the tail only with it: the
    slowdown began with the mean, so it did not come together with the memory."""
    from infersight.diagnose.conditions import eval_group
    from infersight.diagnose.kb import Group

    f = _frame(_vector_incident())
    slower = [
        {"signal": s, "state": "up", "where": "same", "when": "together"}
        for s in ("inference.forward_time_avg", "inference.forward_time_p99")
    ]
    group = Group.model_validate(
        {"all": [{"signal": "inference.gpu_mem_used_bytes", "state": "up"}, {"any": slower}]}
    )
    memory = _stepped((50e9, 70e9), ONSET, f.n)
    early = ONSET - 2 * int(CFG.together_s // f.step)
    for mean_at, holds in ((ONSET, True), (early, False)):
        ctx, _ = _ctx_with(
            {
                "inference.gpu_mem_used_bytes": memory,
                "inference.forward_time_avg": _stepped((0.02, 0.06), mean_at, f.n),
                "inference.forward_time_p99": _stepped((0.05, 0.15), ONSET, f.n),
            }
        )
        assert eval_group(ctx, group).truth is holds, mean_at


def test_when_together_cannot_part_a_change_from_one_there_before_the_window() -> None:
    """A card fuller than its peers' from the window's first point got that way before the
    window: when is unknown, so a slowdown later in the window may have come with it. The
    same memory gap opening half an hour before the slowdown, inside the window, is apart."""
    from infersight.diagnose.conditions import eval_group
    from infersight.diagnose.kb import Group

    f = _frame(_vector_incident())
    group = Group.model_validate(
        {
            "all": [
                {"signal": "inference.gpu_mem_used_bytes", "state": "outlier", "direction": "up"},
                {
                    "signal": "inference.forward_time_avg",
                    "state": "up",
                    "where": "same",
                    "when": "together",
                },
            ]
        }
    )
    early = ONSET - 2 * int(CFG.together_s // f.step)
    assert early > 0
    for memory_at, holds in ((0, True), (early, False)):
        ctx, _ = _ctx_with(
            {
                "inference.gpu_mem_used_bytes": _stepped((40e9, 75e9), memory_at, f.n),
                "inference.forward_time_avg": _stepped((0.02, 0.06), ONSET, f.n),
            }
        )
        o = eval_group(ctx, group)
        assert o.truth is holds, memory_at
        if holds:
            assert o.instances == {"node-0"}


def test_when_during_reads_a_level_while_the_anchors_change_lasts() -> None:
    """The users' tail moved at the onset, the surge came 35 min later and pinned the GPUs: the
    median since the onset is the calm part's, the median since the surge is 100%."""
    from pydantic import ValidationError

    from infersight.diagnose.conditions import eval_group
    from infersight.diagnose.kb import Condition, Group

    f = _frame(_vector_incident())
    surge = ONSET + 35
    assert surge < f.n - 10

    def group(when: str) -> Group:
        busy = {"signal": "inference.gpu_util", "state": "above", "level": 0.85}
        return Group.model_validate(
            {
                "all": [
                    {"signal": "service.request_rate", "state": "up", "min_share": 0.5},
                    {**busy, "min_share": 0.5, "when": when},
                ]
            }
        )

    ctx, _ = _ctx_with(
        {
            "service.request_rate": _stepped((100.0, 400.0), surge, f.n)[[0] * len(NODES)],
            "inference.gpu_util": np.where(np.arange(f.n) >= surge, 1.0, 0.6)
            * np.ones((len(NODES), 1)),
        }
    )
    assert ctx.onset < f.times[surge]
    assert eval_group(ctx, group("any")).truth is False
    o = eval_group(ctx, group("during"))
    assert o.truth is True and len(o.instances) == len(NODES)
    assert any("above 85%" in e.statement and "since" in e.statement for e in o.evidence)
    with pytest.raises(ValidationError, match="when: during applies"):
        Condition(signal="inference.gpu_util", state="up", when="during")


def test_when_during_reads_a_shift_since_the_anchors_change() -> None:
    """The users' tail dated the incident; the disk got busy 35 min later and every request
    has been 25% slower since. Read since the onset, the median is still the calm part's;
    read since the disk's change, the requests slowed with it."""
    from infersight.diagnose.conditions import eval_group
    from infersight.diagnose.kb import Group

    f = _frame(_vector_incident())
    busy = ONSET + 35
    rng = np.random.default_rng(7)

    def step(a: float, b: float) -> np.ndarray:
        rows = np.where(np.arange(f.n) >= busy, b, a) * np.ones((len(NODES), 1))
        return rows * (1 + 0.01 * rng.standard_normal(rows.shape))

    def group(when: str) -> Group:
        slower = {"signal": "service.e2e_latency_avg", "state": "rose", "factor": 1.2}
        return Group.model_validate(
            {
                "all": [
                    {"signal": "infra.disk_util", "state": "up"},
                    {**slower, "where": "same", "when": when},
                ]
            }
        )

    ctx, _ = _ctx_with(
        {"infra.disk_util": step(0.02, 0.3), "service.e2e_latency_avg": step(0.04, 0.05)}
    )
    assert ctx.onset < f.times[busy]
    assert eval_group(ctx, group("any")).truth is False
    o = eval_group(ctx, group("during"))
    assert o.truth is True and len(o.instances) == len(NODES)
    clock = time.strftime("%H:%M", time.gmtime(f.times[busy]))
    assert any(f"since {clock} UTC" in e.statement for e in o.evidence if e.kind == "level")


def test_when_together_needs_the_same_instances_and_a_dated_change() -> None:
    from pydantic import ValidationError

    from infersight.diagnose.kb import Condition

    for bad in (
        {"state": "up", "when": "together"},  # where: any
        {"state": "trend_up", "where": "same", "when": "together"},  # a slope has no date
        {"state": "above", "level": 0.1, "where": "same", "when": "together"},  # a median level
    ):
        with pytest.raises(ValidationError, match="when: together needs"):
            Condition(signal="inference.forward_time_avg", **bad)  # type: ignore[arg-type]
    Condition(signal="inference.forward_time_avg", state="up", where="same", when="together")


def test_a_level_crossed_before_the_onset_is_dated_by_its_first_crossing() -> None:
    from infersight.diagnose.conditions import eval_condition
    from infersight.diagnose.kb import Condition

    f = _frame(_vector_incident())
    loads = np.zeros((len(NODES), f.n))
    loads[2, 30::20] = 40.0  # one key loaded 40 times at once, every 20 min since long before
    ctx, _ = _ctx_with({"dependency.cache_concurrent_loads": loads})
    c = Condition(signal="dependency.cache_concurrent_loads", state="above", level=8, stat="max")
    o = eval_condition(ctx, c, None)
    assert o.truth is True and o.instances == {"node-2"}
    assert o.onset == f.start + 30 * f.step
    # past the level from the first sample on: nothing in the window dates it, so the
    # incident's part dates it (its first sample past the level there), not the window's start
    loads[2, :] = 40.0
    ctx, _ = _ctx_with({"dependency.cache_concurrent_loads": loads})
    o = eval_condition(ctx, c, None)
    assert o.truth is True and o.onset == f.start + ctx.split() * f.step
    # read to rule a cause out, a bad level already passed before marks no change: no veto
    assert eval_condition(ctx, c, None, refuting=True).truth is False


def test_rose_reads_a_shift_below_detection_floors_beyond_the_noise() -> None:
    from infersight.diagnose.conditions import eval_condition
    from infersight.diagnose.kb import Condition

    f = _frame(_vector_incident())
    rose = Condition(signal="service.e2e_latency_avg", state="rose", factor=1.2, where="same")
    noise = np.random.default_rng(3).standard_normal((len(NODES), f.n))
    for jitter, lift, holds in ((0.01, 1.3, True), (0.01, 1.05, False), (0.3, 1.3, False)):
        latency = 0.045 * (1 + jitter * noise)
        latency[0, ONSET:] *= lift  # 30% slower on node-0: under the 40% deviation floor
        ctx, _ = _ctx_with({"service.e2e_latency_avg": latency})
        o = eval_condition(ctx, rose, frozenset({"node-0", "node-1"}))
        assert o.truth is holds, (jitter, lift)
        if holds:
            assert o.instances == {"node-0"}
            assert "rose to" in o.evidence[0].statement


def test_a_shift_part_of_the_way_is_weak_support_and_vetoes_nothing() -> None:
    from infersight.diagnose.conditions import eval_condition
    from infersight.diagnose.kb import Condition

    f = _frame(_vector_incident())
    pinned = Condition(signal="service.e2e_latency_avg", state="rose", factor=1.2, where="same")
    fleet = Condition(signal="service.e2e_latency_avg", state="rose", factor=1.2, min_share=0.5)
    noise = np.random.default_rng(3).standard_normal((len(NODES), f.n))
    latency = 0.045 * (1 + 0.01 * noise)
    latency[:, ONSET:] *= 1.12  # 12% slower everywhere: over half of 1.2× (in ratio terms)
    ctx, _ = _ctx_with({"service.e2e_latency_avg": latency})
    o = eval_condition(ctx, pinned, frozenset(NODES))
    assert o.truth is True and o.instances == set(NODES)
    assert "part of the 1.2× looked for: weak support" in o.evidence[0].statement
    assert max(o.scores) == ctx.config.partial_score
    # read to rule a cause out it is no evidence; nor on instances nothing else pinned
    assert eval_condition(ctx, pinned, frozenset(NODES), refuting=True).truth is False
    assert eval_condition(ctx, fleet, None).truth is False


def test_rose_needs_a_factor_and_the_same_instances_or_half_the_fleet() -> None:
    from pydantic import ValidationError

    from infersight.diagnose.kb import Condition

    with pytest.raises(ValidationError, match="needs a factor, and where: same or a min_share"):
        Condition(signal="service.e2e_latency_avg", state="rose", where="same")
    with pytest.raises(ValidationError, match="needs a factor, and where: same or a min_share"):
        Condition(signal="service.e2e_latency_avg", state="rose", factor=1.2)
    with pytest.raises(ValidationError, match="needs a factor, and where: same or a min_share"):
        Condition(signal="service.e2e_latency_avg", state="rose", factor=1.2, min_share=0.4)
    Condition(signal="service.request_rate", state="rose", factor=1.5, min_share=0.5)


def test_rose_across_the_fleet_reads_a_step_on_top_of_the_window_level() -> None:
    """A surge on a morning ramp: the window's level is the ramp's, its step is the surge's."""
    from infersight.diagnose.conditions import eval_condition
    from infersight.diagnose.kb import Condition

    f = _frame(_vector_incident())
    rose = Condition(signal="service.request_rate", state="rose", factor=1.5, min_share=0.5)
    noise = np.random.default_rng(4).standard_normal((len(NODES), f.n))
    for stepped, holds in (((0, 1, 2, 3), True), ((0, 1), True), ((0,), False)):
        rate = 60.0 * (1 + 0.02 * noise)
        rate[list(stepped), ONSET:] *= 4.0
        ctx, _ = _ctx_with({"service.request_rate": rate})
        o = eval_condition(ctx, rose, None)
        assert o.truth is holds, stepped
        if holds:
            assert o.instances == {f"node-{i}" for i in stepped}


def test_row_medians_match_numpy_per_row_without_nans() -> None:
    rng = np.random.default_rng(3)
    block = rng.normal(size=(40, 17))
    block[rng.random(block.shape) < 0.3] = np.nan
    block[5] = np.nan  # a row with no numbers at all
    block[6, :3] = [np.inf, -np.inf, 2.0]
    got = row_medians(block)
    for i, row in enumerate(block):
        ok = row[~np.isnan(row)]
        want = float(np.median(ok)) if ok.size else np.nan
        assert (np.isnan(got[i]) and np.isnan(want)) or got[i] == want, i
    assert row_medians(block[:, :0]).shape == (40,)


def test_outpaces_compares_a_slowdown_with_what_its_would_be_cause_can_make() -> None:
    """Batches 1.6x slower than the fleet's on a card whose clock is 1.5% below theirs: the
    clock did not slow them. With the clock 25% down, the same slowdown is the clock's."""
    from infersight.diagnose.conditions import eval_condition
    from infersight.diagnose.kb import Condition

    pace = Condition(
        signal="inference.forward_time_avg",
        state="outpaces",
        than="infra.gpu_sm_clock_mhz",
        factor=1.25,
        where="same",
    )
    f = _frame(_vector_incident())
    for clock_drop, slower, holds in ((0.985, 1.6, True), (0.75, 1.3, False), (0.985, 1.1, False)):
        fwd = np.full((len(NODES), f.n), 0.023)
        fwd[1, ONSET:] *= slower
        clk = np.full((len(NODES), f.n), 1980.0)
        clk[1, ONSET:] *= clock_drop
        ctx, _ = _ctx_with({"inference.forward_time_avg": fwd, "infra.gpu_sm_clock_mhz": clk})
        o = eval_condition(ctx, pace, frozenset({"node-1"}))
        assert o.truth is holds, (clock_drop, slower)
        if holds:
            assert o.instances == {"node-1"}
            assert "1.60× worse than its peers'" in o.evidence[0].statement
            # a comparison over the incident part dates no change
            assert o.onset is None and o.evidence[0].onset is None


def test_outpaces_with_stat_max_compares_the_peaks_growth_with_the_cause_s() -> None:
    """A pass 2.5x slower at its worst while the mean batch peaked 1.3x higher: each item
    costs more, the batches went past the knee. Below the knee (batch 2x, pass 1.6x) a
    larger batch costs less per item: not past it. No batch readings: not on data."""
    from pydantic import ValidationError

    from infersight.diagnose.conditions import eval_condition
    from infersight.diagnose.kb import Condition

    fwd_sig, batch_sig = "inference.forward_time_avg", "inference.batch_size"
    pace = Condition(
        signal=fwd_sig, state="outpaces", than=batch_sig, stat="max", factor=1.2, where="same"
    )
    f = _frame(_vector_incident())
    burst = slice(ONSET + 10, ONSET + 20)
    cases = ((2.5, 1.3, True), (1.6, 2.0, False), (2.5, None, False))
    for slower, larger, holds in cases:
        fwd = np.full((len(NODES), f.n), 0.024)
        fwd[:, burst] *= slower
        batch = np.full((len(NODES), f.n), 6.0 if larger is not None else np.nan)
        batch[:, burst] *= larger or 1.0
        ctx, _ = _ctx_with({fwd_sig: fwd, batch_sig: batch})
        o = eval_condition(ctx, pace, frozenset(NODES))
        assert o.truth is holds, (slower, larger)
        if holds:
            assert o.instances == set(NODES)
            text = o.evidence[0].statement
            assert "peaked 2.50× its highest before" in text and "peaked 1.30×" in text
    with pytest.raises(ValidationError, match="takes stat: max only"):
        Condition(
            signal=fwd_sig, state="outpaces", than=batch_sig, stat="min", factor=1.2, where="same"
        )


def test_a_condition_held_on_too_few_says_so_on_an_instance_without_it() -> None:
    """VRAM peaked at 100% on one card of four: "above 90% on half the fleet" is not seen,
    and the evidence shows a card that stayed below, its peak, and how many held."""
    from infersight.diagnose.conditions import eval_condition
    from infersight.diagnose.kb import Condition

    f = _frame(_vector_incident())
    vram = np.full((len(NODES), f.n), 0.65)
    vram[0, ONSET + 5 : ONSET + 8] = 1.0
    vram[1:, ONSET + 5 : ONSET + 8] = 0.8
    ctx, _ = _ctx_with({"inference.gpu_mem_used_ratio": vram})
    peak = Condition(
        signal="inference.gpu_mem_used_ratio", state="above", level=0.9, stat="max", min_share=0.5
    )
    o = eval_condition(ctx, peak, None)
    assert o.truth is False and len(o.evidence) == 1
    ev = o.evidence[0]
    assert ev.instance == "node-1" and not ev.supports
    assert "peak 80%" in ev.statement and "peak 65%" in ev.statement
    assert "held on 1 of 4 instances, needs at least 50%" in ev.statement


def test_a_deviation_of_a_given_size_is_dated_when_it_got_that_big() -> None:
    """A rate 45% over its band from the onset that a surge raised again 20 points later is
    "up 1.5x" since the surge; without a size asked, since it left the band."""
    from infersight.diagnose.conditions import eval_condition
    from infersight.diagnose.kb import Condition

    f = _frame(_vector_incident())
    noise = np.random.default_rng(5).standard_normal((len(NODES), f.n))
    rate = 60.0 * (1 + 0.01 * noise)
    rate[:, ONSET:] *= 1.45
    rate[:, ONSET + 20 :] *= 2.5
    ctx, _ = _ctx_with({"service.request_rate": rate})
    rps = "service.request_rate"
    sized = eval_condition(ctx, Condition(signal=rps, state="up", factor=1.5), None)
    plain = eval_condition(ctx, Condition(signal=rps, state="up"), None)
    assert sized.truth is True and plain.truth is True
    assert plain.onset is not None and plain.onset <= f.start + (ONSET + 2) * f.step
    assert sized.onset == f.start + (ONSET + 20) * f.step
    ev = sized.evidence[0]
    assert ev.onset == sized.onset and "1.5× its baseline or more since" in ev.statement


def test_outpaces_needs_than_factor_and_the_same_instances() -> None:
    from pydantic import ValidationError

    from infersight.diagnose.kb import Condition

    fwd, clk = "inference.forward_time_avg", "infra.gpu_sm_clock_mhz"
    with pytest.raises(ValidationError, match="state 'outpaces' needs `than`"):
        Condition(signal=fwd, state="outpaces", factor=1.2, where="same")
    with pytest.raises(
        ValidationError, match=r"`than` applies to states 'outpaces', 'adds'.*, not 'rose'"
    ):
        Condition(signal=fwd, state="rose", than=clk, factor=1.2, where="same")
    with pytest.raises(ValidationError, match=r"unknown signal 'gpu\.clock' in `than`"):
        Condition(signal=fwd, state="outpaces", than="gpu.clock", factor=1.2, where="same")
    with pytest.raises(ValidationError, match="needs a factor and where: same"):
        Condition(signal=fwd, state="outpaces", than=clk, factor=1.2)


def test_direction_only_with_outlier() -> None:
    """An up/down state names its own way: a `direction` beside it would be ignored."""
    from pydantic import ValidationError

    from infersight.diagnose.kb import Condition

    Condition(signal="infra.gpu_temp_c", state="outlier", direction="up")
    with pytest.raises(ValidationError, match="direction applies to state 'outlier', not 'up'"):
        Condition(signal="infra.gpu_temp_c", state="up", direction="down")


def _bump_then_surge(gap: int) -> tuple[dict[str, MetricFrame], int, int]:
    """Traffic 2x for 20 min, back to normal for `gap` min, then 3x from 5 min before the
    users' latency rose; the 1 h baseline overlaps the incident window, as a real one does."""
    lag, nodes = 60, ("node-0", "node-1", "node-2")
    rng = np.random.default_rng(3)
    rate, lat = np.full((3, N + lag), 100.0), np.full((3, N + lag), 0.4)
    surge = lag + ONSET - 5
    bump = surge - gap - 20
    rate[:, bump : bump + 20], rate[:, surge:], lat[:, lag + ONSET :] = 200.0, 300.0, 4.0
    rate *= 1 + 0.02 * rng.standard_normal(rate.shape)
    lat *= 1 + 0.02 * rng.standard_normal(lat.shape)

    def frame(a: int, start: float) -> MetricFrame:
        return MetricFrame(
            start,
            STEP,
            N,
            {
                "service.request_rate": SignalSeries(nodes, rate[:, a : a + N]),
                "service.e2e_latency_p99": SignalSeries(nodes, lat[:, a : a + N]),
            },
        )

    w = {"incident": frame(lag, START), "baseline-1h": frame(0, START - lag * STEP)}
    return w, bump - lag, surge - lag


@pytest.mark.parametrize(("gap", "dated_by"), [(25, "surge"), (5, "bump")])
def test_a_size_reached_again_after_a_pause_is_a_new_episode(gap: int, dated_by: str) -> None:
    """A traffic bump served and gone 25 min before the surge the users felt does not date
    the surge; a dip of 5 min within one excursion does not split it."""
    from infersight.detect import detect
    from infersight.diagnose.conditions import eval_condition
    from infersight.diagnose.kb import Condition

    w, bump, surge = _bump_then_surge(gap)
    f = w["incident"]
    ctx = Context.build(f, detect(w), ("service.e2e_latency_p99",))
    (dev,) = ctx.anomalies("service.request_rate", "node-0", "deviation")
    assert f.index_of(dev.onset) == bump  # detection sees one deviation from the bump on
    o = eval_condition(ctx, Condition(signal="service.request_rate", state="up", factor=1.5), None)
    assert o.truth is True and o.onset is not None
    assert f.index_of(o.onset) == {"surge": surge, "bump": bump}[dated_by]


def test_a_deviation_s_size_is_read_while_the_incident_lasts() -> None:
    """A pass 1.8x slower since the morning ramp and 6x slower since the incident began is up
    3x in this incident: the precursor does not dilute the size the users felt. Detection's
    own median over the whole excursion stays under 3x, so the incident's readings decide,
    and they date it: odd readings past 3x every 10 min on the ramp do not."""
    from infersight.detect import detect
    from infersight.diagnose.conditions import eval_condition
    from infersight.diagnose.kb import Condition

    nodes, fwd, lat = (
        ("node-0", "node-1", "node-2"),
        "inference.forward_time_p99",
        "service.e2e_latency_p99",
    )
    rng = np.random.default_rng(11)

    def frame(start: float, incident: bool) -> MetricFrame:
        rows = {fwd: np.full((3, N), 0.05), lat: np.full((3, N), 0.4)}
        if incident:  # yesterday's window saw neither the ramp nor the incident
            rows[fwd][:, ONSET - 150 :] *= 1.8
            rows[fwd][:, ONSET - 100 : ONSET - 5 : 10] *= 2.0  # odd readings past 3x on the ramp
            rows[fwd][:, ONSET:], rows[lat][:, ONSET:] = 0.3, 4.0
        return MetricFrame(
            start,
            STEP,
            N,
            {
                s: SignalSeries(nodes, v * (1 + 0.02 * rng.standard_normal(v.shape)))
                for s, v in rows.items()
            },
        )

    w = {"incident": frame(START, True), "baseline-1d": frame(START - 86400, False)}
    ctx = Context.build(w["incident"], detect(w), (lat,))
    (dev,) = ctx.anomalies(fwd, "node-0", "deviation")
    assert dev.onset < ctx.onset and dev.observed is not None and dev.baseline is not None
    assert dev.observed < 3 * dev.baseline  # the excursion's median: the ramp dilutes it
    o = eval_condition(ctx, Condition(signal=fwd, state="up", factor=3), None)
    assert o.truth is True and o.instances == set(nodes)
    assert "300 ms since the incident began (5.9" in o.evidence[0].statement
    # a size only the incident reaches is dated from just before it, not by the odd readings
    assert o.onset == ctx.frame.start + ONSET * STEP


def test_a_library_caller_with_nothing_readable_is_told_so() -> None:
    empty = MetricFrame(START, STEP, N, {"service.e2e_latency_p99": SignalSeries(
        NODES, np.full((len(NODES), N), np.nan))})  # fmt: skip
    dx = diagnose({"incident": empty})
    assert dx.judged is False and dx.healthy is False
    assert dx.summary.startswith("Cannot judge")
    full = diagnose({"incident": _frame(_vector_incident())})
    assert full.judged is True and full.coverage


def test_one_of_two_machines_slowing_is_a_slow_instance_and_both_are_not() -> None:
    """Seed §4.2 with the smallest fleet there is: one peer to compare with. Half the fleet is
    one machine, and one peer is enough once its own past says which of the two moved."""

    def spec(slow_too: bool) -> dict[str, dict[str, tuple[float, float]]]:
        after = 0.26 if slow_too else 0.12
        return {
            "inference.forward_time_avg": {"node-0": (0.12, 0.26), "node-1": (0.12, after)},
            "service.e2e_latency_p99": {"node-0": (0.4, 0.95), "node-1": (0.4, 3.6 * after)},
            "service.e2e_latency_avg": {"node-0": (0.2, 0.42), "node-1": (0.2, 1.6 * after)},
            "service.request_rate": {"node-0": (20.0, 20.0), "node-1": (20.0, 20.0)},
            "inference.gpu_util": {"node-0": (0.6, 0.6), "node-1": (0.6, 0.6)},
        }

    dx = diagnose({"incident": _frame(spec(slow_too=False))})
    assert [r.hypothesis for r in dx.root_causes][:1] == ["slow_instance"]
    h = dx.hypothesis("slow_instance")
    assert h is not None and h.instances == ("node-0",)
    both = diagnose({"incident": _frame(spec(slow_too=True))})
    assert "slow_instance" not in {r.hypothesis for r in both.root_causes}
