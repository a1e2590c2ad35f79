"""`bundle import scrape-*.prom --interval 15s --start …`, as the README writes it (issue 39):
eight scrapes of one vLLM target are one instance with eight points, not eight instances."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from infersight.bundle import read_bundle

pytestmark = pytest.mark.slow

SCRAPE = """# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{{model_name="m"}} {running}
# TYPE vllm:num_requests_waiting gauge
vllm:num_requests_waiting{{model_name="m"}} {waiting}
"""


def test_scrapes_of_one_target_import_as_one_instance(tmp_path: Path) -> None:
    for k in range(8):
        text = SCRAPE.format(running=4 + k % 2, waiting=k)
        (tmp_path / f"scrape-{k + 1:03d}.prom").write_text(text)
    files = sorted(str(p.name) for p in tmp_path.glob("scrape-*.prom"))
    r = subprocess.run(
        [sys.executable, "-c", "from infersight.cli import main; main()", "bundle", "import",
         *files, "--interval", "15s", "--start", "2026-12-02T02:00:00Z", "-o", "b.tar.gz"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert "× 1 instances" in r.stdout, r.stdout
    frame = read_bundle(tmp_path / "b.tar.gz").frame
    assert frame.instances == ["scrape"]
    queue = frame.get("service.queue_length")
    assert queue is not None and queue.values.shape == (1, 8)
    assert queue.values[0].tolist() == [float(k) for k in range(8)]
