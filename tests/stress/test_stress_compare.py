"""Stress profiles, results and the run-to-run verdict, on hand-made results."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from infersight.stress.compare import RunFileError, compare, load_run, noise_band
from infersight.stress.profiles import PROFILES, steps
from infersight.stress.runner import SCHEMA, Slo, run, summarize


def _run(
    p99: float, throughput: float = 10.0, errors: float = 0.0, sat: str | None = None
) -> dict[str, Any]:
    step = {
        "name": "soak",
        "users": 10,
        "throughput": throughput,
        "p50_s": p99 / 3,
        "p99_s": p99,
        "p999_s": p99 * 1.2,
        "error_ratio": errors,
    }
    return {
        "schema": SCHEMA,
        "profile": "soak",
        "steps": [step],
        "total": {**step, "name": "total"},
        "saturation_step": sat,
    }


def test_profiles_cover_their_duration_and_peak() -> None:
    for profile in PROFILES:
        plan = steps(profile, users=12, duration_s=90)
        assert sum(s.seconds for s in plan) == pytest.approx(90)
        assert max(s.users for s in plan) == 12
    assert [s.fault for s in steps("instance-loss", 4, 30)] == [None, "replica-kill", None]
    assert [s.users for s in steps("spike", 12, 30)] == [3, 12, 3]
    with pytest.raises(ValueError, match="unknown profile"):
        steps("tsunami", 4, 30)


def test_summary_quantiles_errors_and_slo() -> None:
    (step,) = steps("soak", 4, 20)
    ok = [0.1] * 98 + [2.0, 3.0]
    row = summarize(step, ok, [0.5], Slo(p99_s=1.0, error_ratio=0.05))
    assert row["requests"] == 101 and row["errors"] == 1
    assert row["p50_s"] == pytest.approx(0.1)
    assert row["p99_s"] > 1.0 and not row["slo_ok"]  # the slow tail breaks the P99 SLO
    assert summarize(step, [0.1] * 50, [], Slo())["slo_ok"]
    assert not summarize(step, [], [], Slo())["slo_ok"]  # nothing answered is no success


def test_verdicts_against_the_band() -> None:
    base = _run(0.30)
    assert compare(base, _run(0.33), band=0.15).verdict == "same"
    weaker = compare(base, _run(0.60), band=0.15)
    assert weaker.verdict == "weaker" and "P99 +100%" in weaker.reasons[0]
    assert compare(base, _run(0.15), band=0.15).verdict == "stronger"
    assert compare(base, _run(0.30, errors=0.05), band=0.15).verdict == "weaker"
    assert compare(base, _run(0.30, throughput=5.0), band=0.15).verdict == "weaker"
    assert compare(base, _run(0.30, sat="soak"), band=0.15).verdict == "weaker"
    unmeasured = compare(base, _run(0.33))
    assert not unmeasured.band_measured and "not measured" in unmeasured.reasons[-1]


def test_a_median_past_the_band_is_weaker_when_the_tail_hides_it() -> None:
    # every request waits 250 ms more (a longer batching window): the median triples, the
    # tail of a loaded machine moves by less than its band
    base = _run(0.60)
    slow = _run(0.75)
    slow["total"]["p50_s"] = base["total"]["p50_s"] + 0.25
    result = compare(base, slow, band=0.43)
    assert result.verdict == "weaker" and result.reasons == ["P50 +125% (band ±43%)"]
    assert compare(slow, base, band=0.43).verdict == "stronger"


def test_noise_band_is_the_spread_of_repeats_with_a_floor() -> None:
    assert noise_band([_run(0.30), _run(0.39)]) == pytest.approx(0.30)
    assert noise_band([_run(0.30), _run(0.30)]) == pytest.approx(0.10)
    with pytest.raises(RunFileError, match="two runs or more"):
        noise_band([_run(0.30)])


def test_the_runs_that_measured_the_band_are_inside_it() -> None:
    # the fastest and the slowest run span the band exactly: each way round they are the same,
    # whatever the rounding of max/min - 1 (1.848 s against 1.383 s once read "stronger")
    for hi, lo in [(1.8477167821586034, 1.382996239076326), (0.41, 0.29), (2.0, 1.7)]:
        runs = [_run(hi), _run(lo)]
        band = noise_band(runs)
        assert compare(runs[0], runs[1], band).verdict == "same"
        assert compare(runs[1], runs[0], band).verdict == "same"


def test_bad_run_files_are_one_line_errors(tmp_path: Path) -> None:
    with pytest.raises(RunFileError, match="cannot be read"):
        load_run(tmp_path / "absent.json")
    (tmp_path / "x.json").write_text("{")
    with pytest.raises(RunFileError, match="not JSON"):
        load_run(tmp_path / "x.json")
    (tmp_path / "y.json").write_text(json.dumps({"schema": "other"}))
    with pytest.raises(RunFileError, match="not a stress run results file"):
        load_run(tmp_path / "y.json")
    other = {**_run(0.3), "profile": "spike"}
    with pytest.raises(RunFileError, match="different profiles"):
        compare(_run(0.3), other)


def test_load_goes_to_loopback_only() -> None:
    with pytest.raises(ValueError, match="loopback only"):
        run("http://example.com:8080", "soak", 2, 20)


def test_html_holds_the_verdict_and_both_runs_bars() -> None:
    from infersight.stress.html import render

    page = render(compare(_run(0.30), _run(0.60), band=0.15), "a<1>.json", "b.json")
    assert "<h1>B is weaker</h1>" in page and "a&lt;1&gt;.json" in page
    assert page.count("<rect") == 8  # two plots x two steps (soak, total) x runs A and B
    assert ">300<" in page and ">600<" in page  # P99 in ms on the bars
