"""Options refused in one line that says what is wrong: what only a live pull reads, given a
bundle (never silently ignored), and a log that is no regular file (never "no such file")."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from infersight.cli import app
from infersight.cli.common import EXIT_USAGE, CommandError

BUNDLE = Path(__file__).resolve().parents[1] / "diagnose" / "lab_incidents" / "healthy.tar.gz"
runner = CliRunner()


@pytest.mark.parametrize("command", ["diagnose", "detect"])
def test_mappings_with_a_bundle_are_refused_in_one_line(command: str) -> None:
    res = runner.invoke(app, [command, str(BUNDLE), "--mappings", "/dev/zero"])
    assert isinstance(res.exception, CommandError) and res.exception.code == EXIT_USAGE
    assert "a bundle's series are already mapped" in res.exception.message


def test_a_log_that_is_no_regular_file_is_named_so(tmp_path: Path) -> None:
    fifo = tmp_path / "vllm.log"
    os.mkfifo(fifo)
    out = str(tmp_path / "scene.tar.gz")
    for log, why in ((fifo, "not a regular file"), (tmp_path / "gone.log", "no such file")):
        res = runner.invoke(
            app, ["capture", "-p", "http://127.0.0.1:9", "--log", str(log), "-o", out]
        )
        assert isinstance(res.exception, CommandError) and res.exception.code == EXIT_USAGE
        assert res.exception.message == f"--log {log}: {why}"
