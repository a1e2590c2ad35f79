"""`stress run` through the command line: a run that broke its SLO (here: every request failed)
is a finding, exit 1, with its results written; a run that held it exits 0; a target that is not
http(s) is refused in one line, exit 2, before anything runs."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "infersight", "stress", *args],
        capture_output=True, text=True, timeout=180, stdin=subprocess.DEVNULL,
        env={**os.environ, "COLUMNS": "150"},
    )  # fmt: skip


class _Answers(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = b'{"answer": "ok"}'
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def answering() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Answers)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture
def refusing() -> Iterator[str]:
    with socket.socket() as s:  # bound, never listening: every connection is refused
        s.bind(("127.0.0.1", 0))
        yield f"http://127.0.0.1:{s.getsockname()[1]}"


@pytest.mark.parametrize("url", ["ftp://127.0.0.1:21", "file:///etc/passwd", "127.0.0.1:8080"])
def test_a_target_that_is_not_http_is_refused_in_one_line(tmp_path: Path, url: str) -> None:
    out = tmp_path / "r.json"
    r = _cli("run", url, "--profile", "soak", "--duration", "10s", "--users", "2", "-o", str(out))
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert r.returncode == 2 and len(lines) == 1, r.stderr
    assert "http:// or https://" in lines[0] and not out.exists()


@pytest.mark.slow
def test_every_request_failing_is_a_finding(tmp_path: Path, refusing: str) -> None:
    out = tmp_path / "r.json"
    r = _cli("run", refusing, "--profile", "soak", "--duration", "10s", "--users", "2",
             "-o", str(out))  # fmt: skip
    assert r.returncode == 1, (r.stdout, r.stderr)
    assert "every request failed" in r.stderr
    result = json.loads(out.read_text())
    assert result["total"]["errors"] == result["total"]["requests"] > 0
    assert not result["slo_ok"]


@pytest.mark.slow
def test_a_run_that_holds_its_slo_exits_0_and_one_that_breaks_it_exits_1(
    tmp_path: Path, answering: str
) -> None:
    common = ["--profile", "soak", "--duration", "10s", "--users", "2", "--format", "json"]
    held = _cli("run", answering, *common, "-o", str(tmp_path / "held.json"))
    assert held.returncode == 0, held.stderr
    assert json.loads(held.stdout)["slo_ok"]
    # the same answers against a P99 bound no answer can meet
    broke = _cli("run", answering, *common, "--slo-p99", "0.000001", "-o", str(tmp_path / "b.json"))
    assert broke.returncode == 1, broke.stderr
    assert json.loads(broke.stdout)["saturation_step"] == "soak"
