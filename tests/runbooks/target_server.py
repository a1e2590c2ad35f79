"""A small real HTTP service for runbook tests, run as its own process: it holds one setting,
changed by POST /setting {"value": N}, read by GET /setting, and exported on /metrics as
`drill_setting` (Prometheus scrapes it). Every other path is 404: an endpoint that moved.

python tests/runbooks/target_server.py PORT
"""

from __future__ import annotations

import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

STATE: dict[str, Any] = {"value": 1.0, "posts": 0}
LOCK = threading.Lock()


class Handler(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _send(self, status: int, body: str, kind: str = "application/json") -> None:
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        with LOCK:
            value, posts = STATE["value"], STATE["posts"]
        if self.path == "/metrics":
            text = f"drill_setting {value}\ndrill_posts_total {posts}\n"
            self._send(200, text, "text/plain; version=0.0.4")
        elif self.path == "/setting":
            self._send(200, json.dumps({"value": value, "posts": posts}))
        else:
            self._send(404, json.dumps({"error": "no such endpoint"}))

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        if self.path != "/setting":
            self._send(404, json.dumps({"error": "no such endpoint"}))
            return
        try:
            value = float(json.loads(raw)["value"])
        except (ValueError, KeyError, TypeError):
            self._send(400, json.dumps({"error": 'give {"value": N}'}))
            return
        with LOCK:
            STATE["value"] = value
            STATE["posts"] += 1
        # echoes the credential it was sent, as careless services do: the audit log must not
        auth = self.headers.get("Authorization", "")
        self._send(200, json.dumps({"value": value, "seen_authorization": auth}))


def main() -> None:
    server = ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler)
    server.daemon_threads = True
    server.serve_forever(0.05)


if __name__ == "__main__":
    main()
