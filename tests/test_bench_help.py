"""Every benchmark answers `--help` with its usage and runs nothing: a request for help must
not spend minutes and rewrite its section of docs/benchmarks.md."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: every module of bench/ is a benchmark but its helpers: `report`, and those named `_*`
BENCHES = sorted(
    p.stem
    for p in (ROOT / "bench").glob("*.py")
    if p.stem != "report" and not p.stem.startswith("_")
)


@pytest.mark.parametrize("name", BENCHES)
def test_help_prints_usage_and_writes_nothing(name: str) -> None:
    doc = ROOT / "docs" / "benchmarks.md"
    before = doc.read_bytes()
    res = subprocess.run(
        [sys.executable, "-m", f"bench.{name}", "--help"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert res.returncode == 0, res.stderr
    assert "usage:" in res.stdout
    assert doc.read_bytes() == before
