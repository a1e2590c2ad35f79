"""The NAB scorer against hand-worked cases and one shipped windowedGaussian file."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import numpy as np
import pytest

from infersight.lab.evaluate.nab_score import (
    TP_FULL,
    FileLayout,
    Profile,
    probation_rows,
    read_series,
    scaled_sigmoid,
    sweep,
    terms,
    total_at,
)

NAB = Path(__file__).resolve().parents[3] / "shared" / "data" / "nab"
STD = Profile("standard", 1.0, 0.11, 1.0)


def _layout(n: int, windows: list[tuple[int, int]]) -> FileLayout:
    stamps = np.datetime64("2020-01-01T00:00:00") + np.arange(n) * np.timedelta64(300, "s")
    iso = [[str(stamps[a]).replace("T", " "), str(stamps[b]).replace("T", " ")] for a, b in windows]
    return FileLayout.build(stamps, iso)


def test_probation_is_15_percent_capped_at_750() -> None:
    assert probation_rows(1000) == 150
    assert probation_rows(4032) == 604
    assert probation_rows(20000) == 750


def test_sigmoid_shape() -> None:
    s = scaled_sigmoid(np.array([-1.0, 0.0, 1.0, 3.5]))
    assert s[0] == pytest.approx(TP_FULL)
    assert s[1] == pytest.approx(0.0)
    assert s[2] < 0 and s[3] == -1.0


def test_first_detection_in_window_counts_once_and_early_is_worth_more() -> None:
    lay = _layout(1000, [(500, 599)])
    early, late = np.zeros(1000), np.zeros(1000)
    early[[500, 520, 540]] = 1.0  # three detections in one window: the first counts
    late[590] = 1.0
    e, lt = total_at(terms(lay, early, STD), 1.0), total_at(terms(lay, late, STD), 1.0)
    assert e == pytest.approx(1.0)  # on the first row: full credit
    expect = (2.0 / (1.0 + math.exp(5.0 * -(599 - 590 + 1) / 100)) - 1.0) / TP_FULL
    assert lt == pytest.approx(expect)
    assert total_at(terms(lay, np.zeros(1000), STD), 1.0) == -1.0  # missed window


def test_false_positives_before_and_after_a_window() -> None:
    lay = _layout(1000, [(500, 599)])
    before, just_after, far_after = np.zeros(1000), np.zeros(1000), np.zeros(1000)
    before[300] = 1.0
    just_after[600] = 1.0
    far_after[950] = 1.0
    assert total_at(terms(lay, before, STD), 1.0) == pytest.approx(-1.0 - 0.11)
    small = total_at(terms(lay, just_after, STD), 1.0) + 1.0
    assert -0.11 < small < 0  # a detection right after the window costs little
    assert total_at(terms(lay, far_after, STD), 1.0) == pytest.approx(-1.11)
    probation = np.zeros(1000)
    probation[10] = 1.0  # inside the probationary period: free
    assert total_at(terms(lay, probation, STD), 1.0) == -1.0


def test_sweep_equals_direct_totals_at_every_threshold() -> None:
    rng = np.random.default_rng(3)
    lays = [_layout(800, [(300, 379), (600, 679)]), _layout(900, [(200, 289)])]
    scores = [rng.random(800), rng.random(900)]
    ts = [terms(lay, s, STD) for lay, s in zip(lays, scores, strict=True)]
    th, tot = sweep(ts)
    for k in (0, 5, len(th) // 2, len(th) - 1):
        assert tot[k] == pytest.approx(sum(total_at(t, th[k]) for t in ts))


@pytest.mark.skipif(not NAB.exists(), reason="NAB corpus not present")
def test_reproduces_a_published_per_file_score() -> None:
    f = "realKnownCause/ec2_request_latency_system_failure.csv"
    windows = json.loads((NAB / "labels" / "combined_windows.json").read_text())
    stamps, _ = read_series(NAB / "data" / f)
    lay = FileLayout.build(stamps, windows[f])
    res = NAB / "results" / "windowedGaussian"
    with (res / "realKnownCause" / f"windowedGaussian_{f.split('/')[1]}").open() as fh:
        s = np.array([float(r["anomaly_score"]) for r in csv.DictReader(fh)])
    with (res / "windowedGaussian_standard_scores.csv").open() as fh:
        published = {r["File"]: float(r["Score"]) for r in csv.DictReader(fh)}
    assert total_at(terms(lay, s, STD), 1.0) == pytest.approx(published[f], abs=1e-9)
