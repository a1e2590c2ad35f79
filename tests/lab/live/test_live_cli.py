"""The lab and stress commands' user errors: one line, the right exit code, no traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # a CLI process per check


@dataclass
class Result:
    exit_code: int
    output: str


def _run(args: list[str]) -> Result:
    p = subprocess.run(
        [sys.executable, "-c", "from infersight.cli import main; main()", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return Result(p.returncode, p.stdout + p.stderr)


def test_status_and_down_without_a_lab_say_so(tmp_path: Path) -> None:
    for cmd in ("status", "down"):
        res = _run(["lab", cmd, "--dir", str(tmp_path)])
        assert res.exit_code == 3, res.output  # cannot judge: there is no lab to read
        assert "no lab in" in res.output and "lab up" in res.output
        assert "Traceback" not in res.output


def test_a_lab_state_that_is_a_fifo_is_one_line(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "lab.json")  # read blocking, `lab status` would wait forever
    res = _run(["lab", "status", "--dir", str(tmp_path)])
    assert res.exit_code == 3 and "lab.json: is a FIFO" in res.output, res.output
    assert len(res.output.strip().splitlines()) == 1


def test_unknown_fault_is_a_usage_error(tmp_path: Path) -> None:
    res = _run(["lab", "fault", "meteor", "--dir", str(tmp_path)])
    assert res.exit_code == 2
    assert "unknown fault 'meteor'" in res.output and "gpu-xid" in res.output


def test_bad_for_duration_is_a_usage_error(tmp_path: Path) -> None:
    res = _run(["lab", "fault", "cpu-hog", "--for", "soon", "--dir", str(tmp_path)])
    assert res.exit_code == 2 and "--for" in res.output


def test_stress_run_refuses_a_remote_url_and_a_bad_profile(tmp_path: Path) -> None:
    out = tmp_path / "run.json"
    res = _run(["stress", "run", "--profile", "soak", "-o", str(out), "http://10.1.2.3:80"])
    assert res.exit_code == 2 and "loopback only" in res.output
    res = _run(["stress", "run", "--profile", "flood", "-o", str(out), "http://127.0.0.1:9"])
    assert res.exit_code == 2 and "unknown profile 'flood'" in res.output
    assert not out.exists()


def test_stress_compare_refuses_what_is_not_a_run(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("[]")
    res = _run(["stress", "compare", str(bad), str(bad)])
    assert res.exit_code == 3 and "not a stress run results file" in res.output  # cannot judge
