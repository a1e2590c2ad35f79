"""The CLI's refusals: one line, the right exit code, nothing run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow
SRC = Path(__file__).resolve().parents[2] / "src"


def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "infersight", "runbook", *args],
        capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
        env={**os.environ, "PYTHONPATH": str(SRC), "COLUMNS": "120", **(env or {})},
    )  # fmt: skip


def _one_line(res: subprocess.CompletedProcess[str], code: int, text: str) -> None:
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert res.returncode == code and len(lines) == 1 and text in lines[0], res.stderr


def test_refusals_are_one_line_with_the_right_exit_code(tmp_path: Path) -> None:
    audit = str(tmp_path / "audit.jsonl")
    listed = cli("list", "--format", "json")
    assert listed.returncode == 0 and len(json.loads(listed.stdout)) >= 25
    _one_line(cli("show", "no-such-book"), 2, "no runbook 'no-such-book'")
    base = ["run", "cache-resize", "-P", "port=6379", "--audit", audit]
    _one_line(cli(*base, "--execute"), 2, "give --prometheus URL")
    prom = ["-p", "http://127.0.0.1:1"]
    _one_line(cli(*base, *prom, "--execute"), 2, "answer on a terminal or add --yes")
    _one_line(cli(*base, "-P", "password=hunter22"), 2, "set $REDIS_PASSWORD")
    _one_line(cli(*base, "-P", "port=6379"), 2, "given twice")
    _one_line(cli("drill", "--against", str(tmp_path / "nolab")), 3, "no lab in")
    assert not Path(audit).exists()  # nothing ran, nothing was logged


def test_execute_refused_by_an_unreachable_prometheus_is_audited(tmp_path: Path) -> None:
    audit = tmp_path / "audit.jsonl"
    res = cli(
        "run", "cache-resize", "-P", "port=6379", "-p", "http://127.0.0.1:1", "--execute",
        "--yes", "--audit", str(audit), "--format", "json",
    )  # fmt: skip
    assert res.returncode == 1
    report = json.loads(res.stdout)
    assert report["outcome"] == "refused" and report["steps"] == []
    assert report["preconditions"][0]["verdict"] == "unknown"  # never read as holding
    events = [json.loads(x)["event"] for x in audit.read_text().splitlines()]
    assert events == ["run-start", "precondition", "run-end"]
