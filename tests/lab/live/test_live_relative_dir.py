"""`lab up --dir lab`, a folder relative to where the command runs, as the README writes it
(issue 39): every process is handed the folder's absolute path (Redis, started inside the
folder, looked for lab/lab/redis and the lab never came up)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from infersight.lab.live import stack
from infersight.lab.live.servers import ServerUnavailable

pytestmark = [pytest.mark.server, pytest.mark.slow]


def _lab(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", "from infersight.cli import main; main()", "lab", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=180,
    )


def test_lab_up_in_a_relative_folder(tmp_path: Path) -> None:
    try:
        stack.check_binaries()
    except ServerUnavailable as exc:
        if os.environ.get("CI") == "true":
            pytest.fail(str(exc))
        pytest.skip(str(exc))
    up = _lab(tmp_path, "up", "--replicas", "1", "--dir", "lab")
    try:
        assert up.returncode == 0, up.stderr
        assert "\\x0a" not in up.stderr
        status = _lab(tmp_path, "status", "--dir", "lab", "-f", "json")
        assert status.returncode == 0, status.stdout + status.stderr
    finally:
        down = _lab(tmp_path, "down", "--dir", "lab")
    assert down.returncode == 0, down.stderr
    assert (tmp_path / "lab" / "redis").is_dir() and not (tmp_path / "lab" / "lab").exists()
