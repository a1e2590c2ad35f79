"""Calibrated confidence in the product: the shipped map, its interpolation, a damaged file
refused in one line, and the engine reporting every root's confidence through it."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from infersight.diagnose import calibrate as cal
from infersight.diagnose.calibrate import Calibration, CalibrationError, calibrated, load, parse
from infersight.diagnose.result import Diagnosis, RootCause
from infersight.lab.evaluate.path_cases import load_cases

ROOT = Path(__file__).resolve().parents[2]
WALK = ROOT / "tests" / "diagnose" / "path_cases"
CASES = ROOT / "tests" / "diagnose" / "cases"


def _doc(**over: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "version": 2,
        "made": "2026-12-06",
        "command": "python -m bench.calibration --seeds 1",
        "pairs": {"suite": 40, "loo": 20},
        "kinds": {
            "named": {
                "x": [0.4, 0.6, 0.9],
                "y": [0.2, 0.5, 0.9],
                "pairs": 40,
                "fitted_on": "named",
            },
            "indirect": {"x": [0.5], "y": [0.4], "pairs": 12, "fitted_on": "all"},
            "unnamed": {"x": [0.5], "y": [0.3], "pairs": 20, "fitted_on": "all"},
        },
    }
    doc.update(over)
    return doc


def test_a_raw_figure_maps_by_straight_lines_between_block_centres_flat_beyond() -> None:
    c = Calibration.model_validate(_doc())
    assert c.map(0.5, "named") == pytest.approx(0.35)  # halfway from (0.4, 0.2) to (0.6, 0.5)
    assert c.map(0.75, "named") == pytest.approx(0.7)
    assert c.map(0.1, "named") == 0.2 and c.map(1.0, "named") == 0.9  # held at the ends
    assert c.map(0.0, "unnamed") == c.map(1.0, "unnamed") == 0.3  # one block: one level
    with pytest.raises(ValueError, match="not a number"):
        c.map(float("nan"), "named")


def test_the_calibration_round_trips_through_its_json(tmp_path: Path) -> None:
    path = tmp_path / "calibration.json"
    path.write_text(json.dumps(_doc()), encoding="utf-8")
    c = load(path)
    again = parse(c.model_dump_json(), "again")
    assert again == c
    assert again.kinds["named"].x == (0.4, 0.6, 0.9) and again.pairs == {"suite": 40, "loo": 20}


def test_the_shipped_calibration_is_read_once_and_says_where_it_came_from() -> None:
    shipped = cal.shipped()
    assert cal.shipped() is shipped
    assert set(shipped.kinds) == {"named", "indirect", "unnamed"}
    assert shipped.command.startswith(".venv/bin/python -m bench.calibration")
    assert sum(shipped.pairs.values()) > 0 and shipped.made[:2] == "20"
    for curve in shipped.kinds.values():
        assert all(0.02 <= y <= 0.98 for y in curve.y)


def test_the_wheel_ships_the_calibration() -> None:
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    shipped = data["tool"]["setuptools"]["package-data"]["infersight"]
    assert f"diagnose/{cal.FILE}" in shipped


def _with(kind: str, **fields: Any) -> str:
    """The good document with one kind's fit changed."""
    kinds = _doc()["kinds"]
    return json.dumps(_doc(kinds={**kinds, kind: {**kinds[kind], **fields}}))


BROKEN = {
    "not JSON": ("{", "not JSON"),
    "decreasing": (_with("named", y=[0.5, 0.2, 0.9]), "kinds.named: y decreases"),
    "x not increasing": (_with("named", x=[0.4, 0.4, 0.9]), "x is not strictly increasing"),
    "lengths differ": (_with("unnamed", x=[0.1, 0.5]), "x has 2 breakpoints, y 1"),
    "above one": (_with("unnamed", y=[1.5]), "y holds a value outside 0..1"),
    "a kind missing": (
        json.dumps(_doc(kinds={"named": _doc()["kinds"]["named"]})),
        "no fit for kind 'indirect'",
    ),
    "another version": (json.dumps(_doc(version=9)), "version 9, this infersight reads 2"),
}


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_a_damaged_calibration_is_refused_in_one_line(tmp_path: Path, name: str) -> None:
    text, why = BROKEN[name]
    path = tmp_path / "calibration.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(CalibrationError) as err:
        load(path)
    line = str(err.value)
    assert "\n" not in line and why in line and str(path) in line
    assert "python -m bench.calibration" in line  # what to do


def test_a_missing_calibration_is_refused_in_one_line(tmp_path: Path) -> None:
    with pytest.raises(CalibrationError) as err:
        load(tmp_path / "nothing.json")
    assert "\n" not in str(err.value) and "nothing.json" in str(err.value)


def test_a_package_without_its_calibration_fails_at_use_never_falls_back(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # the package's folder as an installer that dropped the file would leave it
    monkeypatch.setattr(cal, "FILE", "calibration-not-shipped.json")
    cal.shipped.cache_clear()
    try:
        with pytest.raises(CalibrationError, match="missing or unreadable"):
            cal.calibrate(0.7, "named")
    finally:
        monkeypatch.undo()
        cal.shipped.cache_clear()
    assert cal.calibrate(0.7, "named") == cal.shipped().map(0.7, "named")


def test_a_root_keeps_its_raw_figure_beside_the_calibrated_one() -> None:
    c = Calibration.model_validate(_doc())
    root = calibrated(RootCause("change@engine:node-0", 1, 0.5, (), unnamed=True), c)
    assert root.raw_confidence == 0.5 and root.confidence == 0.3
    named = calibrated(RootCause("vram_leak", 1, 0.5, ()), c)
    assert named.raw_confidence == 0.5 and named.confidence == pytest.approx(0.35)
    # a rule read from the effects of where the walk ended, or a limit beside a trigger, is
    # right less often than one seen where the walk ended: its own curve
    read = calibrated(RootCause("vram_oom_cascade", 1, 0.5, (), direct=False), c)
    limit = calibrated(RootCause("max_batch_too_large", 1, 0.5, (), triggered_by="surge"), c)
    assert read.confidence == limit.confidence == 0.4


def test_a_later_root_is_never_shown_surer_than_the_first(monkeypatch: pytest.MonkeyPatch) -> None:
    # the fit measures first answers: an unnamed second root mapped to 0.3 under a named first
    # root mapped to 0.2 is shown at 0.2, its raw figure kept
    monkeypatch.setattr(cal, "shipped", lambda: Calibration.model_validate(_doc()))
    first = RootCause("vram_leak", 1, 0.4, ())
    second = RootCause("change@engine:node-0", 2, 0.5, (), unnamed=True)
    shown = cal.in_rank_order((second, first))
    assert [r.rank for r in shown] == [1, 2]
    assert shown[0].confidence == pytest.approx(0.2) and shown[1].confidence == pytest.approx(0.2)
    assert shown[1].raw_confidence == 0.5


def _roots_calibrated(dx: Diagnosis) -> None:
    assert dx.root_causes
    shown = 1.0
    for r in dx.root_causes:
        assert r.raw_confidence is not None
        # calibrated, and never surer than a root ranked before it
        shown = min(shown, cal.calibrate(r.raw_confidence, cal.kind_of(r)))
        assert r.confidence == shown
        # the hypothesis keeps the engine's own score: the root's raw figure
        h = dx.hypothesis(r.hypothesis)
        assert h is not None and h.confidence == r.raw_confidence


def test_the_engine_reports_a_named_roots_confidence_calibrated() -> None:
    case = next(c for c in load_cases(CASES) if c.expect.get("root") == "gpu_thermal_throttling")
    dx = Diagnosis.from_dict(json.loads(json.dumps(case.diagnose().to_dict())))  # via its JSON
    assert dx.root_causes[0].hypothesis == "gpu_thermal_throttling"
    assert not dx.root_causes[0].unnamed
    _roots_calibrated(dx)


def test_the_engine_reports_an_unnamed_roots_confidence_calibrated() -> None:
    case = next(c for c in load_cases(WALK) if c.name.startswith("the prefix-cache hit ratio"))
    dx = case.diagnose()
    assert dx.root_causes[0].unnamed
    _roots_calibrated(dx)


@pytest.mark.slow
def test_the_command_line_says_in_one_line_that_the_calibration_is_missing() -> None:
    # an install that lost the file: the first diagnosis stops with one line, exit 3
    code = (
        "import infersight.diagnose.calibrate as c; c.FILE = 'calibration-lost.json'; "
        "from infersight.cli import main; main()"
    )
    res = subprocess.run(
        [sys.executable, "-c", code, "demo"], capture_output=True, text=True, timeout=300
    )
    assert res.returncode == 3, res.stderr
    lines = res.stderr.strip().splitlines()  # the demo's progress lines, then the error
    assert [x for x in lines if x.startswith("error:")] == lines[-1:]
    assert "calibration-lost.json is missing or unreadable" in lines[-1]
    assert "Traceback" not in res.stderr
