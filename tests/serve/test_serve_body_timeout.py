"""Issue 38, item 13: a request body trickled byte by byte cannot hold a connection of
`infersight serve` (a real process, uvicorn) open: past `body_timeout` for the whole body the
answer is 408 and the connection is closed; the service goes on answering others."""

from __future__ import annotations

import contextlib
import json
import socket
import time
from pathlib import Path

import httpx
import pytest
from alerting_servers import ServeProcess
from notifications import notification

pytestmark = pytest.mark.slow
TOKEN = "trickle-t0ken-123456"


def _read_until_closed(sock: socket.socket, limit_s: float) -> bytes:
    sock.settimeout(limit_s)
    data = b""
    while chunk := sock.recv(4096):
        data += chunk
    return data


def test_a_trickled_body_is_cut_off_with_408(tmp_path: Path) -> None:
    config = tmp_path / "serve.yaml"
    config.write_text(
        f"auth: {{bearer_token: {TOKEN}}}\nout_dir: {tmp_path / 'out'}\nbody_timeout: 1s\n"
    )
    body = json.dumps(notification("g1", ["a"])).encode()
    serve = ServeProcess(config, tmp_path)
    with serve:
        port = int(serve.url.rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
            sock.sendall(
                b"POST /alerts HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                + f"Authorization: Bearer {TOKEN}\r\nContent-Type: application/json\r\n".encode()
                + f"Content-Length: {len(body)}\r\n\r\n".encode()
            )
            # one byte at a time, steadily: a whole-body deadline cuts it off however steady
            # (the body would take over a minute); stop sending once the server has answered.
            # Look before each byte, not after: a byte sent after the server closed is answered
            # with a reset, which throws away the 408 still unread in this socket
            sock.setblocking(False)
            for byte in body[:300]:
                with contextlib.suppress(BlockingIOError):
                    if sock.recv(1, socket.MSG_PEEK):
                        break
                try:
                    sock.send(bytes([byte]))
                except OSError:  # closed by the server
                    break
                time.sleep(0.2)
            sock.setblocking(True)
            reply = _read_until_closed(sock, 30)  # the server closes it: recv ends with b""
        assert reply.startswith(b"HTTP/1.1 408 "), reply[:200]
        assert b"body not received within 1 s" in reply
        assert b"connection: close" in reply.lower()
        # the service is not held: a whole body is taken at once
        ok = httpx.post(
            serve.url + "/alerts",
            content=body,
            headers={"Authorization": f"Bearer {TOKEN}"},
            timeout=10,
        )
        assert ok.status_code == 200 and ok.json()["status"] == "accepted"
        metrics = httpx.get(serve.url + "/metrics", timeout=10).text
    assert 'infersight_serve_notifications_total{result="timeout"} 1.0' in metrics
