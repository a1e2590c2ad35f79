"""`coverage.apply`: a diagnosis's all-clear without grounds becomes "cannot judge"; a finding is
never turned into one; an answer already not judged keeps its reason."""

from __future__ import annotations

import dataclasses

import numpy as np

from infersight import coverage
from infersight.diagnose import diagnose
from infersight.diagnose.result import Diagnosis, HypothesisResult, Verdict
from infersight.frame import MetricFrame

START, STEP, N = 1_750_000_000.0, 60.0, 30
NODES = ["n0", "n1"]


def _windows(n: int = N, baseline: bool = True) -> dict[str, MetricFrame]:
    def frame(start: float) -> MetricFrame:
        return MetricFrame(start, STEP, n).with_series(
            "inference.gpu_util", NODES, np.full((2, n), 0.6)
        )

    out = {"incident": frame(START)}
    if baseline:
        out["baseline-1h"] = frame(START - 3600)
    return out


def _dx(healthy: bool, verdict: Verdict = "refuted") -> Diagnosis:
    h = HypothesisResult("gpu_util_low", "GPU idle", "inference", verdict, 0.0, "2.2")
    return Diagnosis(START, START + (N - 1) * STEP, STEP, healthy, "Nothing is wrong: …", {},
                     hypotheses=(h,))  # fmt: skip


def test_an_all_clear_with_grounds_stands() -> None:
    cov = coverage.assess(_windows())
    assert cov.references == ("baseline-1h",) and cov.points == N
    dx = coverage.apply(_dx(True), cov)
    assert dx.judged and dx.healthy and dx.coverage == cov.layers


def test_an_all_clear_without_a_baseline_is_not_judged() -> None:
    dx = coverage.apply(_dx(True), coverage.assess(_windows(baseline=False)))
    assert not dx.judged and not dx.healthy
    assert dx.summary.startswith("Cannot judge: no baseline to compare with")


def test_an_all_clear_with_no_hypothesis_decided_is_not_judged() -> None:
    dx = coverage.apply(_dx(True, "inconclusive"), coverage.assess(_windows()))
    assert not dx.judged and "no failure mode could be checked (all 1 need" in dx.summary


def test_a_finding_without_grounds_for_an_all_clear_stays_a_finding() -> None:
    found = dataclasses.replace(_dx(False, "confirmed"), summary="Root cause: …")
    dx = coverage.apply(found, coverage.assess(_windows(baseline=False)))
    assert dx.judged and not dx.healthy and dx.summary == "Root cause: …"


def test_an_answer_not_judged_keeps_its_reason() -> None:
    first = coverage.apply(_dx(True), coverage.assess(_windows(n=1)))
    assert not first.judged and "one time point" in first.summary
    again = coverage.apply(first, coverage.assess(_windows(n=1)))
    assert again.summary == first.summary and not again.judged and not again.healthy


def test_the_engine_answers_one_time_point_with_cannot_judge() -> None:
    dx = diagnose(_windows(n=1))
    assert dx.judged is False and dx.healthy is False and "one time point" in dx.summary
    assert diagnose(_windows()).judged is True
