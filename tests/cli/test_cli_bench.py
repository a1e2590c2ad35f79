"""`infersight bench accuracy` from the installed entry point, on a one-cell subset."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", "from infersight.cli import main; main()", "bench", *args],
        capture_output=True,
        text=True,
    )


@pytest.mark.sim
def test_accuracy_from_a_later_seed_as_json_and_into_a_page(tmp_path: Path) -> None:
    page = tmp_path / "benchmarks.md"
    res = _run(
        "accuracy", "--seeds", "1", "--first-seed", "12", "--dialects", "triton",
        "--scenarios", "unbounded_queue", "--json", "--update", str(page),
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    assert doc["ac1"] == 1.0 and set(doc["scenarios"]) == {"unbounded_queue"}
    text = page.read_text()
    assert "--seeds 1 --first-seed 12 --dialects triton" in text
    assert "seeds 12–12" in text


@pytest.mark.slow
def test_accuracy_rejects_an_empty_dialect_list() -> None:
    res = _run("accuracy", "--dialects", ",")
    assert res.returncode == 2 and "--dialects is empty" in res.stderr
