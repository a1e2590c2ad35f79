"""`infersight alerts render` and `infersight dashboards render` as a user runs them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", "from infersight.cli import main; main()", *args],
        capture_output=True,
        text=True,
        timeout=180,
        env={**os.environ, "COLUMNS": "200"},
    )


def test_alerts_render_writes_both_files_and_says_what_it_left_out(tmp_path: Path) -> None:
    res = cli("alerts", "render", "-e", "vllm,dcgm", "-o", str(tmp_path / "rules"), "-f", "json")
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    assert sorted(Path(p).name for p in out["files"]) == [
        "infersight-alerts.rules.yml", "infersight-recording.rules.yml",
    ]  # fmt: skip
    assert "InferVRAMExhaustionAhead" in out["alerts"]
    assert any(s.startswith("InferCacheHitCollapse: no exporter") for s in out["skipped"])
    again = cli("alerts", "render", "-e", "vllm", "-o", str(tmp_path / "rules"))
    assert again.returncode == 3
    assert "exists" in again.stderr and "--overwrite" in again.stderr


def test_alerts_render_usage_errors_are_one_line(tmp_path: Path) -> None:
    none = cli("alerts", "render", "-o", str(tmp_path))
    assert none.returncode == 2
    assert "--exporters" in none.stderr and len(none.stderr.strip().splitlines()) == 1
    bad = cli("alerts", "render", "-e", "vllm,nope", "-o", str(tmp_path))
    assert bad.returncode == 2 and "unknown exporter family nope" in bad.stderr


def test_dashboards_render_writes_a_valid_dashboard(tmp_path: Path) -> None:
    target = tmp_path / "dash.json"
    res = cli("dashboards", "render", "-e", "redis", "-o", str(target))
    assert res.returncode == 0, res.stderr
    data = json.loads(target.read_text())
    titles = [p["title"] for p in data["panels"]]
    assert titles[0] == "4. dependency" and "dependency.cache_hit_ratio" in titles
    assert cli("dashboards", "render", "-o", str(target)).returncode == 3  # exists
