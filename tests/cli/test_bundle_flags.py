"""Options that only a live pull reads are refused with a bundle, never silently ignored."""

from __future__ import annotations

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
