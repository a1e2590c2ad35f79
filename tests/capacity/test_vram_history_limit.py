"""`capacity vram --days` is bounded by the grid limit: a history of more points per series
than `Limits.grid_points` is refused in one line before a query is sent (100,000 days at 5 m
took minutes past the command's deadline); the documented week is read as before."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from servers import FakeServer, Reply, Request, ok

pytestmark = pytest.mark.slow


def _empty(req: Request) -> Reply:
    if req.path.endswith("/query_range"):
        return ok({"resultType": "matrix", "result": []})
    return ok([])  # names and label values: none


def _vram(url: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "infersight", "capacity", "vram", "-p", url, *args],
        capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
        env={**os.environ, "COLUMNS": "200", "INFERSIGHT_LIMITS": ""},
    )  # fmt: skip


def test_a_history_past_the_grid_limit_is_refused_before_any_query() -> None:
    with FakeServer(_empty) as fake:
        r = _vram(fake.url, "--days", "100000")
        assert r.returncode == 2, r.stderr
        lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
        assert len(lines) == 1 and "--days 100000 at --step 5m: 28,800,001 grid points" in lines[0]
        assert "--raise-limit grid_points=N" in lines[0]
        assert fake.requests == []


def test_the_documented_week_is_read() -> None:
    with FakeServer(_empty) as fake:
        r = _vram(fake.url, "--days", "7")
        assert r.returncode != 2, r.stderr  # no VRAM in the answers: 3, "none reports VRAM"
        assert fake.requests
