"""Helpers for tests that talk to servers: real binaries (`require`) and a scripted fake."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest

from infersight.lab.live.servers import ServerUnavailable, binary


def require(name: str) -> None:
    """Skip the test when `name` is not installed; fail instead under CI (CI=true)."""
    try:
        binary(name)
    except ServerUnavailable as exc:
        if os.environ.get("CI") == "true":
            pytest.fail(str(exc))
        pytest.skip(str(exc))


# -- a scripted HTTP server in a thread, for failure tests ------------------------------------


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    params: dict[str, str]
    headers: dict[str, str]


Reply = tuple[int, str | bytes | dict[str, Any]]
Handler = Callable[[Request], Reply]


class FakeServer:
    """`with FakeServer(handler) as fake:` serves `handler(request)` → (status, body) on
    127.0.0.1; a dict body is sent as JSON. `fake.requests` records every request received and
    `fake.max_in_flight` the most requests handled at once."""

    def __init__(self, handler: Handler, content_type: str = "application/json") -> None:
        self.handler = handler
        self.content_type = content_type
        self.requests: list[Request] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()
        fake = self

        class _H(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _serve(self) -> None:
                url = urlsplit(self.path)
                params = dict(parse_qsl(url.query))
                length = int(self.headers.get("Content-Length") or 0)
                if length:
                    params.update(parse_qsl(self.rfile.read(length).decode()))
                req = Request(self.command, url.path, params, dict(self.headers.items()))
                with fake._lock:
                    fake.requests.append(req)
                    fake.in_flight += 1
                    fake.max_in_flight = max(fake.max_in_flight, fake.in_flight)
                try:
                    status, body = fake.handler(req)
                finally:
                    with fake._lock:
                        fake.in_flight -= 1
                data = json.dumps(body).encode() if isinstance(body, dict) else body
                raw = data.encode() if isinstance(data, str) else data
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", fake.content_type)
                    self.send_header("Content-Length", str(len(raw)))
                    self.end_headers()
                    self.wfile.write(raw)
                except OSError:  # the client gave up (timeout tests)
                    pass

            do_GET = _serve
            do_POST = _serve

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _H)
        self._httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}"
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.02,), daemon=True)

    def __enter__(self) -> FakeServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


def ok(data: Any) -> Reply:
    return 200, {"status": "success", "data": data}


def matrix(series: list[tuple[dict[str, str], list[tuple[float, str]]]]) -> Reply:
    result = [{"metric": m, "values": [[t, v] for t, v in pts]} for m, pts in series]
    return ok({"resultType": "matrix", "result": result})
