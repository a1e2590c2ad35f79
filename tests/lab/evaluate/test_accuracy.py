"""The accuracy harness: how cases are scored, and what the report says about cells left out."""

from __future__ import annotations

import pytest

from infersight.lab.evaluate.accuracy import AccuracyReport, Case, run_accuracy, score, share_wrong
from infersight.lab.evaluate.scenario_windows import alert_time, fault_not_shown
from infersight.lab.sim import simulate
from infersight.lab.sim.scenarios import get_scenario


def _case(truth: tuple[str, ...], predicted: tuple[str, ...], **kw: object) -> Case:
    args: dict[str, object] = {"scenario": "s", "seed": 0, "dialect": "vllm", "seconds": 0.1}
    args.update(kw)
    return Case(truth=truth, predicted=predicted, **args)  # type: ignore[arg-type]


def test_hit_at_k_single_and_compound_roots() -> None:
    assert _case(("a",), ("b", "a")).hit(3) and not _case(("a",), ("b", "a")).hit(1)
    both = _case(("a", "b"), ("b", "c", "a"))
    assert both.hit(3) and not both.hit(1)  # k is at least the number of true roots
    assert not _case(("a", "b"), ("b", "c", "d", "a")).hit(3)
    assert _case((), ()).hit(1) and not _case((), ("x",)).hit(1)


def test_unobservable_cases_are_reported_apart_not_scored() -> None:
    rep = AccuracyReport(
        [
            _case(("a",), ("a",)),
            _case(
                ("a",), ("x",), dialect="tgi", missing=("service.gc_pause_ratio",), unchecked=("a",)
            ),
        ]
    )
    assert rep.ac(1) == 1.0 and len(rep.unobservable()) == 1
    text = rep.to_markdown()
    assert "1 observable incident cases (1 more not observable" in text
    assert "| s | tgi | 1 | service.gc_pause_ratio | x | 1 of 1 |" in text


def test_not_applicable_cells_are_not_run_and_say_why() -> None:
    rep = run_accuracy(seeds=1, dialects=["tgi", "triton"], scenarios=["gc_pauses"])
    assert rep.cases == []
    assert set(rep.not_applicable) == {("gc_pauses", "tgi"), ("gc_pauses", "triton")}
    assert "no garbage collector" in rep.not_applicable[("gc_pauses", "tgi")]


@pytest.mark.sim
def test_one_real_cell_end_to_end() -> None:
    rep = run_accuracy(seeds=1, dialects=["triton"], scenarios=["unbounded_queue"])
    (case,) = rep.cases
    assert case.observable, case.missing  # Triton's cumulative queue time decides it
    assert case.predicted[:1] == ("unbounded_queue",)
    assert "n/a" not in rep.to_markdown()


def test_a_draw_that_never_produced_its_fault_is_listed_not_scored() -> None:
    rep = AccuracyReport(
        [
            _case(("a",), ("a",)),
            _case(("a",), (), seed=7, not_shown="no inference.oom_rate above zero after the onset"),
        ]
    )
    assert rep.ac(3) == 1.0 and len(rep.not_shown()) == 1 and rep.unobservable() == []
    text = rep.to_markdown()
    assert "1 whose draw never produced its fault" in text
    assert "- s seed 7 (vllm): no inference.oom_rate above zero after the onset" in text


@pytest.mark.sim
def test_the_oom_cascade_that_ran_out_of_no_memory_is_not_shown() -> None:
    """vram_oom_cascade seed 63: the longer inputs and the burst took VRAM to 90% and no card
    ran out of memory. Seed 0 of the same scenario did OOM, and is scored as usual."""
    rep = run_accuracy(seeds=1, first_seed=63, dialects=["vllm"], scenarios=["vram_oom_cascade"])
    (void,) = rep.cases
    assert not void.observable and "inference.oom_rate" in void.not_shown
    rep = run_accuracy(seeds=1, dialects=["vllm"], scenarios=["vram_oom_cascade"])
    (case,) = rep.cases
    assert case.not_shown == "" and case.observable


@pytest.mark.sim
def test_a_card_throttled_after_the_diagnosis_is_not_shown_by_it() -> None:
    """gpu_thermal_throttling seed 58: the card reached its threshold by 12:10, its throttle
    flag was on for that one minute, and it held the clock down from 12:17, a minute after
    the diagnosis (no alert fired: onset + 45 min + 30 min). Read ten minutes later, the
    throttling had shown for three readings in a row and more."""
    thermal = get_scenario("gpu_thermal_throttling")
    res = simulate("gpu_thermal_throttling", hours=26, instances=6, seed=58, step=60.0)
    at = alert_time(res)
    why = fault_not_shown(res, thermal.shows_as, at, thermal.shows_for)
    assert "infra.gpu_throttle above zero for 3 readings in a row" in why
    assert fault_not_shown(res, thermal.shows_as, at, 1) == ""  # the one-minute flicker
    assert fault_not_shown(res, thermal.shows_as, at + 600, thermal.shows_for) == ""
    res = simulate("gpu_thermal_throttling", hours=26, instances=6, seed=57, step=60.0)
    assert fault_not_shown(res, thermal.shows_as, alert_time(res), thermal.shows_for) == ""


def test_scores_round_towards_the_misses() -> None:
    """One miss in 5,692 must not read as a perfect score, nor one false root as none."""
    assert score(5691 / 5692) == "0.999" and score(1.0) == "1.000" and score(0.7) == "0.700"
    assert score(0.999, 2) == "0.99" and score(float("nan")) == "nan"
    assert share_wrong(1 / 1800) == "0.1%" and share_wrong(0.0) == "0.0%"
    assert share_wrong(0.02) == "2.0%"
    rep = AccuracyReport([_case(("a",), ("a",))] * 999 + [_case(("a",), ("b",))])
    assert "AC@1 0.999, AC@3 0.999" in rep.to_markdown()
