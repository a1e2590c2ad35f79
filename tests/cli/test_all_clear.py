"""An all-clear needs grounds (issue 38, items 1 and 2): "nothing is wrong" with nothing to
compare with, or with no hypothesis checked, is "cannot judge" and exit 3, never exit 0.

Each case runs the real command in a subprocess on a real bundle: the simulated 02:17 incident
captured half an hour into it with and without the hour before, a healthy fleet likewise, and
one hour of a single signal (one scrape: test_one_scrape.py).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from infersight.bundle import write_bundle
from infersight.frame import MetricFrame
from infersight.lab.sim.outputs import sim_windows
from infersight.lab.sim.run import simulate

EXIT_OK, EXIT_FINDINGS, EXIT_CANNOT_JUDGE = 0, 1, 3
START = 1_700_000_000.0

pytestmark = pytest.mark.slow


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", "from infersight.cli import main; main()", *args],
        capture_output=True,
        text=True,
        timeout=300,
    )


def assert_cannot_judge(res: subprocess.CompletedProcess[str], why: str) -> None:
    """Exit 3 with the one line on stderr saying why, and no all-clear anywhere."""
    assert res.returncode == EXIT_CANNOT_JUDGE, (res.returncode, res.stdout, res.stderr)
    assert "Traceback" not in res.stderr and "Warning" not in res.stderr, res.stderr
    lines = [line for line in res.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("cannot judge: "), res.stderr
    assert why in lines[0], lines[0]
    assert "Nothing is wrong" not in res.stdout


def assert_json_unjudged(bundle: Path, why: str) -> None:
    res = cli("diagnose", str(bundle), "-f", "json")
    assert_cannot_judge(res, why)
    doc = json.loads(res.stdout)
    assert doc["judged"] is False and doc["healthy"] is False
    assert doc["summary"].startswith("Cannot judge: ") and why in doc["summary"]


def _sim_bundles(tmp_path: Path, scenario: str) -> tuple[Path, Path]:
    """(without baselines, with the hour before) of a 30 min window: for an incident, 10 to 40
    minutes after its onset, so the whole window lies inside it."""
    res = simulate(scenario, hours=3, instances=3, seed=1, history_h=1.0)
    onset = res.truth.onset
    end = float(res.times[-1]) if onset is None else (onset + 2400) // 15 * 15
    windows = sim_windows(res, "vllm", end, 1800.0)
    assert "baseline-1h" in windows
    bare = write_bundle(tmp_path / f"{scenario}-none", {"incident": windows["incident"]},
                        {"kind": "test"})  # fmt: skip
    based = write_bundle(tmp_path / f"{scenario}-1h", windows, {"kind": "test"})
    return bare, based


@pytest.mark.sim
def test_an_incident_captured_without_baselines_is_not_an_all_clear(tmp_path: Path) -> None:
    bare, based = _sim_bundles(tmp_path, "incident_0217")
    assert_cannot_judge(cli("diagnose", str(bare)), "no baseline to compare with")
    assert_json_unjudged(bare, "--baselines 1h")
    assert_cannot_judge(cli("detect", str(bare)), "no baseline to compare with")
    # the same window with the hour before names the vector DB
    res = cli("diagnose", str(based), "-f", "json")
    assert res.returncode == EXIT_FINDINGS, res.stderr
    doc = json.loads(res.stdout)
    assert doc["judged"] is True and doc["root_causes"][0]["hypothesis"] == "vector_db_swap"


@pytest.mark.sim
def test_a_healthy_hour_is_judged_against_a_baseline_and_not_without(tmp_path: Path) -> None:
    """The decision for a quiet window with no baseline: its own first minutes and its peers
    cannot tell it from the incident above, so it is "cannot judge" too; given the hour
    before, the same window is judged healthy."""
    bare, based = _sim_bundles(tmp_path, "healthy_flat")
    res = cli("diagnose", str(based), "-f", "json")
    assert res.returncode == EXIT_OK, (res.stdout, res.stderr)
    doc = json.loads(res.stdout)
    assert doc["judged"] is True and doc["healthy"] is True
    assert cli("detect", str(based)).returncode == EXIT_OK
    assert_cannot_judge(cli("diagnose", str(bare)), "no baseline to compare with")
    assert_cannot_judge(cli("detect", str(bare)), "no baseline to compare with")


def test_one_signal_with_no_hypothesis_checked_is_not_an_all_clear(tmp_path: Path) -> None:
    """CPU 20% → 100% on two nodes for an hour, nothing else: not one cause can be checked.
    Against the window's own first half the rise is too weak to name, so the answer is "cannot
    judge"; against the hour before it is a change, named as such."""
    n = 240
    cpu = np.full((2, n), 0.2)
    cpu[:, n // 2 :] = 1.0
    cpu *= 1 + 0.01 * np.random.default_rng(0).standard_normal(cpu.shape)
    frame = MetricFrame(START, 15.0, n).with_series("infra.cpu_util", ["n0", "n1"], cpu)
    bare = write_bundle(tmp_path / "bare", {"incident": frame}, {"kind": "test"})
    assert_cannot_judge(cli("diagnose", str(bare)), "no failure mode could be checked")
    assert_json_unjudged(bare, "need signals this data lacks")
    # detection lists what changed, and where; its exit status is the same verdict (issue 39)
    det = cli("detect", str(bare))
    assert_cannot_judge(det, "no failure mode could be checked")
    assert "infra.cpu_util" in det.stdout, det.stdout
    hour_before = MetricFrame(START - 3600, 15.0, n).with_series(
        "infra.cpu_util", ["n0", "n1"], np.full((2, n), 0.2)
    )
    windows = {"incident": frame, "baseline-1h": hour_before}
    based = write_bundle(tmp_path / "based", windows, {"kind": "test"})
    res = cli("diagnose", str(based))
    assert res.returncode == EXIT_FINDINGS, (res.stdout, res.stderr)
    # where the window's change began is named: the hosts, with the CPU's figures
    assert "A change at the host" in res.stdout and "infra.cpu_util" in res.stdout, res.stdout
