"""±1e308, ±Inf and NaN in the input (issue 38): read as missing with one note saying so, never
numpy's RuntimeWarnings on the terminal nor an internal error.

The simulated 02:17 incident with its hour before, a share of every signal's readings replaced
by such values, diagnosed, detected and drawn by the real commands in a subprocess.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from infersight.bundle import write_bundle
from infersight.frame import MetricFrame, SignalSeries
from infersight.lab.sim.outputs import sim_windows
from infersight.lab.sim.run import simulate

pytestmark = [pytest.mark.slow, pytest.mark.sim]
HOSTILE = np.array([1e308, -1e308, 5e307, np.inf, -np.inf, np.nan])


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", "from infersight.cli import main; main()", *args],
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    res = simulate("incident_0217", hours=3, instances=4, seed=1, history_h=1.0)
    assert res.truth.onset is not None
    windows = sim_windows(res, "canonical", (res.truth.onset + 900) // 15 * 15, 1800.0)
    rng = np.random.default_rng(0)
    out = {}
    for name, frame in windows.items():
        series = {}
        for signal, s in frame.series.items():
            v = s.values.copy()
            hit = rng.random(v.shape) < 0.2
            v[hit] = rng.choice(HOSTILE, int(hit.sum()))
            if rng.random() < 0.2:
                v[:] = rng.choice(HOSTILE)  # a whole signal of them
            series[signal] = SignalSeries(s.instances, v)
        out[name] = MetricFrame(frame.start, frame.step, frame.n, series)
    return write_bundle(tmp_path_factory.mktemp("hostile") / "b", out, {"kind": "test"})


def _quiet(res: subprocess.CompletedProcess[str]) -> None:
    assert res.returncode in (0, 1, 3), (res.returncode, res.stderr)
    assert "Warning" not in res.stderr and "Traceback" not in res.stderr, res.stderr
    assert "internal error" not in res.stderr, res.stderr
    note = [line for line in res.stderr.splitlines() if line.startswith("note: ")]
    assert len(note) == 1 and "were ±Inf or past ±1e30" in note[0], res.stderr


def test_diagnose_and_detect_read_them_as_missing(bundle: Path, tmp_path: Path) -> None:
    for args in ([], ["--full"], ["-f", "md"]):
        _quiet(cli("diagnose", str(bundle), *args))
    res = cli("diagnose", str(bundle), "-f", "json")
    _quiet(res)
    assert json.loads(res.stdout)["judged"] is True
    html = tmp_path / "r.html"
    _quiet(cli("diagnose", str(bundle), "-o", str(html)))
    assert "<svg" in html.read_text()
    _quiet(cli("detect", str(bundle)))


def test_capacity_vram_reads_them_as_missing(tmp_path: Path) -> None:
    n = 240
    ratio, used = np.full((2, n), 0.6), np.full((2, n), 6e10)
    ratio[0, ::7], ratio[1, ::5], ratio[1, ::9] = 1e308, -np.inf, np.nan
    used[0, ::3] = np.inf
    frame = MetricFrame(1.75e9, 15.0, n).with_series("inference.gpu_mem_used_ratio", ["a", "b"],
                                                     ratio)  # fmt: skip
    frame = frame.with_series("inference.gpu_mem_used_bytes", ["a", "b"], used)
    b = write_bundle(tmp_path / "vram", {"incident": frame}, {"kind": "test"})
    res = cli("capacity", "vram", str(b), "-f", "json")
    _quiet(res)
    for row in json.loads(res.stdout)["instances"]:
        assert row["peak_share"] == pytest.approx(0.6), row
