"""Real Alertmanager and a Prometheus that evaluates alerting rules, on free loopback ports, and
`infersight serve` as a real process: the parts of the alert → capture path, for tests."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx

from infersight.lab.live.servers import LocalPrometheus, _LocalServer, binary, free_port


class AlertingPrometheus(LocalPrometheus):
    """LocalPrometheus with a rule file, evaluating every second and sending to Alertmanager;
    it scrapes `scrape` (host:port) as job `watched`."""

    def __init__(
        self, *, rules: str, alertmanager_url: str, backfill: Sequence[Path], scrape: str
    ) -> None:
        super().__init__(backfill=backfill)
        self.rules = rules
        self.alertmanager = alertmanager_url.removeprefix("http://")
        self.scrape = scrape

    def _prepare(self) -> None:
        super()._prepare()
        rules = self.workdir / "rules.yml"
        rules.write_text(self.rules)
        self.config_file.write_text(
            "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
            f"rule_files: ['{rules}']\n"
            "alerting:\n  alertmanagers:\n"
            f"    - static_configs:\n        - targets: ['{self.alertmanager}']\n"
            "scrape_configs:\n  - job_name: watched\n"
            f"    static_configs:\n      - targets: ['{self.scrape}']\n"
        )


class LocalAlertmanager(_LocalServer):
    """prometheus-alertmanager on 127.0.0.1:PORT with the given config (clustering off)."""

    name = "alertmanager"

    def __init__(self, config: str) -> None:
        self._bin = binary("prometheus-alertmanager")
        super().__init__(None)
        self.config = config

    def _prepare(self) -> None:
        (self.workdir / "alertmanager.yml").write_text(self.config)

    def _command(self) -> list[str]:
        return [
            self._bin,
            f"--config.file={self.workdir / 'alertmanager.yml'}",
            f"--storage.path={self.workdir / 'data'}",
            f"--web.listen-address=127.0.0.1:{self.port}",
            "--cluster.listen-address=",
        ]

    def _ready_path(self) -> str:
        return "/-/ready"


class ServeProcess:
    """`infersight serve --config FILE` in a process of its own, on a free loopback port."""

    def __init__(self, config: Path, workdir: Path, env: dict[str, str] | None = None) -> None:
        self.config, self.workdir = config, workdir
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = {**os.environ, **(env or {})}
        self.log = workdir / "serve.log"
        self._proc: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> ServeProcess:
        main = "from infersight.cli import main; main()"
        cmd = [sys.executable, "-c", main, "serve", "--config", str(self.config)]
        cmd += ["--port", str(self.port)]
        with open(self.log, "ab") as log:
            self._proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=self.env)
        deadline = time.monotonic() + 60
        with httpx.Client(timeout=2.0, trust_env=False) as http:
            while time.monotonic() < deadline:
                if self._proc.poll() is not None:
                    raise RuntimeError(f"serve exited: {self.log.read_text()[-2000:]}")
                with contextlib.suppress(httpx.HTTPError):
                    if http.get(self.url + "/healthz").status_code == 200:
                        return self
                time.sleep(0.1)
        self.__exit__()
        raise RuntimeError(f"serve not ready: {self.log.read_text()[-2000:]}")

    def __exit__(self, *exc: object) -> None:
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


class SlackReceiver:
    """A Slack-compatible incoming webhook on loopback: records the JSON posted to it."""

    def __init__(self) -> None:
        self.posts: list[dict[str, Any]] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                receiver.posts.append(json.loads(self.rfile.read(length)))
                self.send_response(200)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}"
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    def __enter__(self) -> SlackReceiver:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
