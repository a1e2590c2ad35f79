"""A bundle imported from one scrape has a window of one point: diagnose answers without a
crash, and the answer is "cannot judge" (one time point compares with nothing), never an
all-clear."""

from __future__ import annotations

import json
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

EXIT_CANNOT_JUDGE = 3


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", "from infersight.cli import main; main()", *args],
        capture_output=True,
        text=True,
        timeout=300,
    )


def assert_cannot_judge(res: subprocess.CompletedProcess[str]) -> None:
    assert res.returncode == EXIT_CANNOT_JUDGE, (res.returncode, res.stdout, res.stderr)
    lines = [line for line in res.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("cannot judge: "), res.stderr
    assert "one time point" in lines[0] and "Nothing is wrong" not in res.stdout


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
    assert_cannot_judge(cli("diagnose", str(bundle)))
    assert_cannot_judge(cli("detect", str(bundle)))
    res = cli("diagnose", str(bundle), "-f", "json")
    assert_cannot_judge(res)
    doc = json.loads(res.stdout)  # the report is still written, saying why
    assert doc["schema"] == "infersight.diagnosis" and doc["judged"] is False
    assert doc["healthy"] is False and doc["summary"].startswith("Cannot judge: the window holds")
