"""`infersight diagnose --alert ALERT.json`: the entry `serve` uses, from a saved notification:
the diagnosis at the alert's startsAt, as with --at; a bad file is one line."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
from notifications import notification
from typer.testing import CliRunner

from incident_now import incident_now
from infersight.cli import app
from infersight.cli.common import EXIT_INPUT, EXIT_USAGE, CommandError
from infersight.lab.live.servers import LocalPrometheus
from infersight.timeparse import iso

runner = CliRunner()


def _roots(args: list[str]) -> list[str]:
    res = runner.invoke(app, [*args, "--format", "json"])
    assert res.exit_code in (0, 1), res.output
    return [r["hypothesis"] for r in json.loads(res.stdout)["root_causes"]]


@pytest.mark.server
def test_a_saved_alert_is_diagnosed_at_its_start(
    tmp_path: Path, prometheus_with_backfill: Callable[[Sequence[Path]], LocalPrometheus]
) -> None:
    om, end = incident_now(tmp_path)
    prom = prometheus_with_backfill([om])
    alert = tmp_path / "alert.json"
    # the earliest firing startsAt counts; a resolved alert of the group does not
    doc = notification("g1", ["a", "b"], starts_at=iso(end))
    doc["alerts"][1]["startsAt"] = iso(end - 600)
    doc["alerts"][1]["status"] = "resolved"
    alert.write_text(json.dumps(doc))
    by_alert = _roots(["diagnose", "-p", prom.url, "--alert", str(alert), "--window", "1h"])
    by_at = _roots(["diagnose", "-p", prom.url, "--at", iso(end), "--window", "1h"])
    assert {"vector_db_swap", "cache_capacity"} <= set(by_alert[:2])
    assert by_alert == by_at


def test_a_bad_alert_file_is_one_line(tmp_path: Path) -> None:
    alert = tmp_path / "alert.json"
    alert.write_text(json.dumps({"version": "3", "alerts": []}))
    res = runner.invoke(app, ["diagnose", "x.tar.gz", "--alert", str(alert)])
    assert isinstance(res.exception, CommandError) and res.exception.code == EXIT_INPUT
    assert "version '3'; only Alertmanager's 4 is read" in str(res.exception)
    res = runner.invoke(app, ["diagnose", "x.tar.gz", "--alert", str(alert), "--at", "now"])
    assert isinstance(res.exception, CommandError) and res.exception.code == EXIT_USAGE
    assert "not both" in str(res.exception)
