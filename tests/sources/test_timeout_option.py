"""--timeout takes a duration with a unit (10s, 2m) or a bare number of seconds."""

from __future__ import annotations

import time

import pytest
import typer
from typer.testing import CliRunner

from infersight.cli import app
from infersight.cli.connection import parse_timeout
from servers import FakeServer, Reply, Request


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("10s", 10.0), ("2m", 120.0), ("45", 45.0), ("1m30s", 90.0), ("0.5", 0.5), (30.0, 30.0)],
)
def test_durations_and_bare_seconds(text: str | float, seconds: float) -> None:
    assert parse_timeout(text) == seconds


@pytest.mark.parametrize("text", ["abc", "0.01", "-5", "10x", "0s"])
def test_refused(text: str) -> None:
    with pytest.raises(typer.BadParameter):
        parse_timeout(text)


@pytest.mark.slow
def test_the_option_reaches_the_client() -> None:
    def slow(_r: Request) -> Reply:
        time.sleep(3)
        return 200, {"status": "success", "data": []}

    with FakeServer(slow) as fake:
        res = CliRunner().invoke(app, ["probe", "-p", fake.url, "--timeout", "1s"])
    assert res.exit_code != 0
    assert "did not answer in full within 1 s" in str(res.exception)
    res = CliRunner().invoke(app, ["probe", "-p", "http://127.0.0.1:9", "--timeout", "soon"])
    assert res.exit_code == 2 and "'soon' is not a duration" in res.output
