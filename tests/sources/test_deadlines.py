"""Wall-clock deadlines per request and per command, Retry-After, the response-size cap and the
JSON depth check, against tiny real HTTP servers in threads.

Deadlines are asserted against the configured deadline with generous slack (a 2 s deadline must
end well under 10 s), never against a tight wall-clock."""

from __future__ import annotations

import contextlib
import json
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from infersight.limits import Limits
from infersight.sources.errors import (
    DeadlineExceeded,
    MalformedResponse,
    QueryTimeout,
    ResponseTooLarge,
    ServerError,
)
from infersight.sources.prometheus import PrometheusClient

pytestmark = pytest.mark.slow

SLACK = 8.0  # seconds beyond a deadline that still pass: CI machines are slow, never this slow
NAMES = json.dumps({"status": "success", "data": ["up"]}).encode()

Script = Callable[[BaseHTTPRequestHandler, int], None]  # (handler, request number)


@contextmanager
def serve(script: Script) -> Iterator[str]:
    """A real HTTP server on 127.0.0.1 whose every answer is written by `script`."""
    count = [0]
    lock = threading.Lock()

    class H(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            with lock:
                count[0] += 1
                n = count[0]
            with contextlib.suppress(OSError):  # the client hung up, as it should
                script(self, n)

        do_POST = do_GET

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), H)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


def _reply(h: BaseHTTPRequestHandler, status: int, body: bytes, **headers: str) -> None:
    h.send_response(status)
    h.send_header("Content-Type", "application/json")
    h.send_header("Content-Length", str(len(body)))
    for k, v in headers.items():
        h.send_header(k.replace("_", "-"), v)
    h.end_headers()
    h.wfile.write(body)


def _trickle(h: BaseHTTPRequestHandler, n: int) -> None:
    """Headers at once, then one byte every 0.5 s: every read succeeds, the answer never ends
    (for 40 s: long past any deadline here)."""
    h.send_response(200)
    h.send_header("Content-Type", "application/json")
    h.send_header("Content-Length", "1000")
    h.end_headers()
    for _ in range(80):
        h.wfile.write(b" ")
        h.wfile.flush()
        time.sleep(0.5)


@contextmanager
def hung_server() -> Iterator[str]:
    """Accepts connections and never answers."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        sock.close()


def _timed(fn: Callable[[], object]) -> tuple[BaseException | None, float]:
    t0 = time.monotonic()
    try:
        fn()
    except Exception as exc:
        return exc, time.monotonic() - t0
    return None, time.monotonic() - t0


def test_a_trickling_body_stops_at_the_request_timeout() -> None:
    with serve(_trickle) as url:
        client = PrometheusClient(url, timeout=2.0, retries=3, backoff=0.01)
        exc, took = _timed(client.metric_names)
    assert isinstance(exc, QueryTimeout), exc
    assert took < 2.0 + SLACK
    assert "within 2 s" in str(exc) and "not retried" in str(exc)


def test_a_hung_server_is_asked_once_not_retried() -> None:
    with hung_server() as url:
        client = PrometheusClient(url, timeout=1.5, retries=3, backoff=0.01)
        exc, took = _timed(client.metric_names)
    assert isinstance(exc, QueryTimeout), exc
    assert client.requests == 1
    assert took < 1.5 + SLACK


def test_the_command_deadline_bounds_many_queries() -> None:
    with hung_server() as url:
        client = PrometheusClient(url, timeout=60.0, deadline=2.0, max_concurrency=2)

        async def many() -> None:
            import asyncio

            await asyncio.gather(*(client.aquery(f"q{i}", 0) for i in range(10)))

        exc, took = _timed(lambda: client.run(many))
    assert isinstance(exc, DeadlineExceeded), exc
    assert "deadline of 2 s" in str(exc) and "--deadline" in str(exc)
    assert took < 2.0 + SLACK


def test_retry_after_on_429_is_honoured() -> None:
    times: list[float] = []

    def script(h: BaseHTTPRequestHandler, n: int) -> None:
        times.append(time.monotonic())
        if n == 1:
            _reply(h, 429, b"slow down", Retry_After="1")
        else:
            _reply(h, 200, NAMES)

    with serve(script) as url:
        client = PrometheusClient(url, backoff=0.01, deadline=20.0)
        assert client.metric_names() == ["up"]
    assert len(times) == 2
    assert times[1] - times[0] >= 0.9  # the server's wish, not the 10 ms backoff


def test_a_retry_after_past_the_deadline_gives_up_at_once() -> None:
    def script(h: BaseHTTPRequestHandler, n: int) -> None:
        _reply(h, 503, b"maintenance", Retry_After="120")

    with serve(script) as url:
        client = PrometheusClient(url, deadline=5.0)
        exc, took = _timed(client.metric_names)
    assert isinstance(exc, ServerError), exc
    assert "retry after 120 s" in str(exc)
    assert took < 5.0  # did not sleep 120 s, nor until the deadline


def test_an_oversized_answer_is_refused_while_streaming() -> None:
    big = b'{"status": "success", "data": ["' + b"x" * (3 << 20) + b'"]}'

    def chunked(h: BaseHTTPRequestHandler, n: int) -> None:  # no Content-Length to go by
        h.send_response(200)
        h.send_header("Transfer-Encoding", "chunked")
        h.end_headers()
        for i in range(0, len(big), 1 << 16):
            part = big[i : i + (1 << 16)]
            h.wfile.write(f"{len(part):x}\r\n".encode() + part + b"\r\n")
        h.wfile.write(b"0\r\n\r\n")

    limits = Limits().replace(response_bytes=1 << 20)
    for script in (lambda h, n: _reply(h, 200, big), chunked):
        with serve(script) as url:
            client = PrometheusClient(url, limits=limits)
            with pytest.raises(ResponseTooLarge, match="response_bytes"):
                client.metric_names()


def test_deep_json_is_one_line_not_a_recursion_error() -> None:
    deep = b'{"status": "success", "data": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    with (
        serve(lambda h, n: _reply(h, 200, deep)) as url,
        pytest.raises(MalformedResponse, match="nested"),
    ):
        PrometheusClient(url).metric_names()


def _cli(*args: str) -> tuple[subprocess.CompletedProcess[str], float]:
    t0 = time.monotonic()
    r = subprocess.run(
        [sys.executable, "-c", "from infersight.cli import main; main()", *args],
        capture_output=True,
        text=True,
        timeout=300,
    )
    return r, time.monotonic() - t0


def test_probe_and_pull_stop_at_the_command_deadline(tmp_path: Any) -> None:
    with hung_server() as url:
        probe, t_probe = _cli("probe", "-p", url, "--deadline", "2")
        pull, t_pull = _cli("pull", "-p", url, "--deadline", "2", "-o", str(tmp_path / "b"))
    for r, took in ((probe, t_probe), (pull, t_pull)):
        assert r.returncode == 3 and "Traceback" not in r.stderr, r.stderr
        assert "deadline" in r.stderr and r.stderr.strip().count("\n") == 0, r.stderr
        assert took < 2.0 + SLACK + 3  # + the interpreter's start
    assert not (tmp_path / "b").exists()


def test_the_deadline_flag_is_documented() -> None:
    from typer.testing import CliRunner

    from infersight.cli import app

    out = CliRunner().invoke(app, ["pull", "--help"], env={"COLUMNS": "200"}).stdout
    assert "--deadline" in out and "whole command" in out and "--raise-limit" in out
