"""What the stack is made of travels with the data: a bundle names the exporter families that
fed it (`source.families`), and the stack read from it is the one the runbooks are chosen for."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from infersight.runbooks.stack import from_source

SRC = Path(__file__).resolve().parents[2] / "src"
#: two scrapes of vLLM behind ingress-nginx
SCRAPE = """\
# TYPE vllm:num_requests_waiting gauge
vllm:num_requests_waiting{instance="node-0:8000",model_name="m"} 3
# TYPE nginx_ingress_controller_requests counter
nginx_ingress_controller_requests{instance="ingress-0:10254",ingress="llm",status="200"} %d
"""


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "infersight", *args],
        capture_output=True, text=True, timeout=300,
        env={**os.environ, "PYTHONPATH": str(SRC)},
    )  # fmt: skip


@pytest.mark.slow
def test_an_imported_bundle_names_its_families_and_so_its_stack(tmp_path: Path) -> None:
    files = []
    for i in range(4):
        f = tmp_path / f"scrape-{i}.prom"
        f.write_text(SCRAPE % (1000 + 600 * i))
        files.append(str(f))
    bundle = tmp_path / "b.tar.gz"
    res = cli("bundle", "import", *files, "--start", "2025-01-01T00:00:00Z", "--interval", "60s",
              "-o", str(bundle))  # fmt: skip
    assert res.returncode == 0, res.stderr
    shown = cli("bundle", "inspect", str(bundle), "--format", "json")
    assert shown.returncode == 0, shown.stderr
    source = json.loads(shown.stdout)["source"]
    assert set(source["families"].split(",")) == {"vllm", "ingress_nginx"}
    assert from_source(source).parts == {"kubernetes", "ingress-nginx"}
