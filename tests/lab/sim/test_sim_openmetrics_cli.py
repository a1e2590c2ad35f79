"""`lab sim -o x.om` (issue 39): says how much it will write before writing it, and writes the
ground truth where it says it is (a text file has no artifacts: `x.truth.json` beside it),
instead of gigabytes without a word and a pointer to a bundle artifact it never wrote."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.sim, pytest.mark.slow]

ABOUT = re.compile(r"writing ([\d,]+) samples to (\S+) \(about ([\d.]+) (KiB|MiB|GiB)\)")
UNITS = {"KiB": 2**10, "MiB": 2**20, "GiB": 2**30}


def sim(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", "from infersight.cli import main; main()", "lab", "sim", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_openmetrics_output_says_its_size_first_and_where_the_truth_is(tmp_path: Path) -> None:
    args = ["-s", "incident_0217", "-d", "vllm", "--duration", "1h", "--history", "1h", "-n", "2"]
    r = sim(tmp_path, *args, "-o", "x.om")
    assert r.returncode == 0, r.stderr
    m = ABOUT.search(r.stderr)
    assert m is not None, r.stderr
    size = (tmp_path / "x.om").stat().st_size
    assert abs(float(m.group(3)) * UNITS[m.group(4)] - size) < 0.1 * size, (m.group(0), size)
    assert int(m.group(1).replace(",", "")) == sum(
        1 for line in (tmp_path / "x.om").read_text().splitlines() if not line.startswith("#")
    )
    assert "bundle's truth.json artifact" not in r.stderr
    assert "the ground truth is in x.truth.json" in r.stderr
    truth = json.loads((tmp_path / "x.truth.json").read_text())
    assert truth["roots"] == ["vector_db_swap", "cache_capacity"]
    # a second run leaves both alone without --overwrite, and replaces both with it
    again = sim(tmp_path, *args, "-o", "x.om")
    assert again.returncode == 2 and "--overwrite" in again.stderr
    (tmp_path / "x.om").unlink()
    again = sim(tmp_path, *args, "-o", "x.om")
    assert again.returncode == 2 and "x.truth.json" in again.stderr
    assert sim(tmp_path, *args, "-o", "x.om", "--overwrite").returncode == 0


def test_a_bundle_holds_its_truth_and_says_so(tmp_path: Path) -> None:
    r = sim(tmp_path, "-s", "healthy_flat", "--duration", "30m", "--history", "1h", "-n", "2",
            "-o", "b.tar.gz")  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert "the ground truth is in b.tar.gz: truth.json" in r.stderr
    assert not (tmp_path / "b.truth.json").exists()
