"""Issue 25 bar: a server that requires X-Scope-OrgID (as Mimir, Cortex and Thanos do) is reached
through the new connection options: --tenant, --header, --bearer-token-file and
--http.config.file. The server is a small proxy in front of a real Prometheus."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner

from incident_now import incident_now
from infersight.bundle import read_bundle
from infersight.cli import app
from infersight.lab.live.servers import LocalPrometheus

pytestmark = pytest.mark.server
runner = CliRunner()
TENANT = "team-a"
TOKEN = "proxy-t0ken-abcdef"


class TenantProxy:
    """Forwards to Prometheus only requests with X-Scope-OrgID: team-a, the bearer token and
    X-Env: prod; answers 401 "no org id" (Mimir's words) without the tenant."""

    def __init__(self, upstream: str) -> None:
        self.seen: list[dict[str, str]] = []
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _serve(self) -> None:
                headers = {k.lower(): v for k, v in self.headers.items()}
                proxy.seen.append(headers)
                length = int(headers.get("content-length") or 0)
                body = self.rfile.read(length) if length else b""
                if headers.get("x-scope-orgid") != TENANT:
                    return self._reply(401, b"no org id\n")
                if headers.get("authorization") != f"Bearer {TOKEN}":
                    return self._reply(401, b"bad token\n")
                if headers.get("x-env") != "prod":
                    return self._reply(403, b"missing X-Env\n")
                r = httpx.request(
                    self.command,
                    upstream + self.path,
                    content=body,
                    headers={"content-type": headers.get("content-type", "")},
                    timeout=30,
                )
                self._reply(r.status_code, r.content)

            def _reply(self, status: int, body: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = _serve
            do_POST = _serve

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}"
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    def __enter__(self) -> TenantProxy:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


@pytest.fixture
def proxied(
    tmp_path: Path, prometheus_with_backfill: Callable[[Sequence[Path]], LocalPrometheus]
) -> Iterator[tuple[TenantProxy, float]]:
    om, end = incident_now(tmp_path, hours=2.0)
    prom = prometheus_with_backfill([om])
    with TenantProxy(prom.url) as proxy:
        yield proxy, end


def test_tenant_header_and_token_file_reach_the_server(
    tmp_path: Path, proxied: tuple[TenantProxy, float]
) -> None:
    proxy, _end = proxied
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN + "\n")
    base = ["probe", "-p", proxy.url, "--json", "--bearer-token-file", str(token_file)]
    refused = runner.invoke(app, [*base, "-H", "X-Env: prod"])
    assert refused.exit_code != 0
    line = str(refused.exception)  # the one line main() prints
    assert "HTTP 401: no org id" in line and "--tenant" in line and TOKEN not in line
    ok = runner.invoke(app, [*base, "-H", "X-Env: prod", "--tenant", TENANT])
    assert ok.exit_code == 0, ok.output
    assert "vllm" in json.loads(ok.stdout)["families"]
    assert proxy.seen[-1]["x-scope-orgid"] == TENANT


def test_http_config_file_as_promtool_reads_it(
    tmp_path: Path, proxied: tuple[TenantProxy, float]
) -> None:
    proxy, end = proxied
    (tmp_path / "secrets").mkdir()
    (tmp_path / "secrets" / "token").write_text(TOKEN)
    cfg = tmp_path / "http.yml"
    cfg.write_text(
        "authorization:\n  type: Bearer\n  credentials_file: secrets/token\n"
        "http_headers:\n"
        f"  X-Scope-OrgID: {{values: [{TENANT}]}}\n"
        "  X-Env: {values: [prod]}\n"
    )
    out = tmp_path / "scene.tar.gz"
    args = ["capture", "-p", proxy.url, "--http.config.file", str(cfg), "--since", "30m"]
    args += ["--at", str(end), "--baselines", "none", "--timeout", "20s", "-o", str(out)]
    res = runner.invoke(app, args)
    assert res.exit_code == 1, res.output  # written; its diagnosis names the incident (act)
    b = read_bundle(out)
    assert len(b.manifest.signals) > 30
    raw = out.read_bytes()
    assert TOKEN.encode() not in raw  # compressed, but the manifest is checked below too
    assert TOKEN not in b.manifest.model_dump_json()


def test_a_bad_http_config_is_one_line_without_the_secret(tmp_path: Path) -> None:
    cfg = tmp_path / "http.yml"
    cfg.write_text(f"authorization: {{credentials: {TOKEN}}}\nbasic_auth: {{username: u}}\n")
    res = runner.invoke(app, ["probe", "-p", "http://127.0.0.1:9", "--http.config.file", str(cfg)])
    assert res.exit_code != 0
    line = str(res.exception)
    assert "mutually exclusive" in line and TOKEN not in line
    cfg.write_text("oauth2: {client_id: x}\n")
    res = runner.invoke(app, ["probe", "-p", "http://127.0.0.1:9", "--http.config.file", str(cfg)])
    assert "oauth2: not supported by infersight" in str(res.exception)
