"""A bundle imported from one scrape has a window of one point: diagnose must still answer."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SCRAPE = """\
# TYPE vllm:num_requests_waiting gauge
vllm:num_requests_waiting{instance="node-0:8000",model_name="m"} 3
# TYPE DCGM_FI_DEV_GPU_UTIL gauge
DCGM_FI_DEV_GPU_UTIL{instance="node-0:9400",Hostname="node-0",gpu="0"} 40
"""


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", "from infersight.cli import main; main()", *args],
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.slow
def test_diagnose_a_one_scrape_import(tmp_path: Path) -> None:
    scrape = tmp_path / "one.prom"
    scrape.write_text(SCRAPE)
    bundle = tmp_path / "one.tar.gz"
    imported = cli(
        "bundle", "import", str(scrape), "--start", "2025-01-01T00:00:00Z", "--interval", "15s",
        "-o", str(bundle),
    )  # fmt: skip
    assert imported.returncode == 0, imported.stderr
    for fmt in ("terminal", "json"):
        res = cli("diagnose", str(bundle), "-f", fmt)
        assert "Traceback" not in res.stderr, res.stderr
        assert res.returncode in (0, 1), res.stderr
        assert ("Window:" if fmt == "terminal" else '"infersight.diagnosis"') in res.stdout
