"""The simulator's size is bounded by `Limits.sim_points` (instances × time points), refused in
one line with the memory it would take before anything is allocated: `lab sim -n 100000` ran
until the kernel killed it at 23 GB. The CLI run has a memory ceiling and a deadline, so a
regression fails here instead of taking the machine."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from infersight.lab.sim import simulate
from infersight.limits import LimitExceeded, Limits


def test_a_run_past_the_point_limit_is_refused_before_it_starts() -> None:
    small = Limits().replace(sim_points=100)
    with pytest.raises(LimitExceeded) as err:  # 2 instances × 61 points at 60 s over an hour
        simulate("healthy_flat", hours=1, instances=2, step=60.0, limits=small)
    line = str(err.value)
    assert "2 instances × 61 time points is 122 points" in line and "GiB of memory" in line
    assert "over the 100-point limit" in line and "INFERSIGHT_LIMITS=sim_points=N" in line
    res = simulate(
        "healthy_flat", hours=1, instances=2, step=60.0, limits=small.replace(sim_points=122)
    )
    assert res.frame.n == 61


def test_the_documented_largest_run_fits_the_default() -> None:
    # bench/sim_memory.py: 1,000 instances over 26 h at 15 s (6.7 GiB peak)
    assert Limits().sim_points >= 1000 * (26 * 240 + 1)


def _ceiling() -> None:  # pragma: no cover - runs in the child
    resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))


@pytest.mark.slow
def test_lab_sim_with_a_fleet_too_large_is_one_line(tmp_path: Path) -> None:
    out = tmp_path / "big.tar.gz"
    r = subprocess.run(
        [sys.executable, "-m", "infersight", "lab", "sim", "-s", "incident_0217", "-n", "100000",
         "-o", str(out)],
        capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
        preexec_fn=_ceiling, env={**os.environ, "INFERSIGHT_LIMITS": ""},
    )  # fmt: skip
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert r.returncode == 2 and len(lines) == 1, r.stderr[-2000:]
    assert "100,000 instances × 6,721 time points" in lines[0] and "sim_points" in lines[0]
    assert not out.exists()
