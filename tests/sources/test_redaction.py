"""A planted secret (URL userinfo, a bearer token, a basic-auth password) never appears in any
output of probe, pull or diagnose -p: stdout, stderr, the bundle's files, the JSON report; against
a real Prometheus, an unreachable server and a server answering 500 that echoes the request."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from urllib.parse import quote

import numpy as np
import pytest

from infersight.lab.live.servers import LocalPrometheus, free_port
from infersight.redact import Redactor, redact_text, redact_url
from infersight.sources.errors import BadCredentials, ServerError
from infersight.sources.openmetrics_writer import write_openmetrics
from infersight.sources.prometheus import PrometheusClient
from infersight.sources.raw import RawStore, labels_of
from servers import FakeServer, Reply, Request

URL_USER, URL_PASS = "alice", "Url-s3cret-pw"
TOKEN = "Tok-s3cret-bearer-0123456789"
BASIC_USER, BASIC_PASS = "bob", "Basic-s3cret-pw"
SECRETS = [URL_PASS, TOKEN, BASIC_PASS]
END = 1_764_000_000.0
STEP = 15.0


def _forms() -> list[str]:
    out = []
    for s in SECRETS:
        out += [s, quote(s, safe="")]
    for user, pw in ((URL_USER, URL_PASS), (BASIC_USER, BASIC_PASS)):
        out.append(base64.b64encode(f"{user}:{pw}".encode()).decode())
    return out


def _with_userinfo(url: str) -> str:
    return url.replace("http://", f"http://{URL_USER}:{URL_PASS}@")


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", "from infersight.cli import main; main()", *args],
        capture_output=True,
        text=True,
        timeout=180,
        cwd=cwd,
    )


def _assert_clean(text: str, where: str) -> None:
    for form in _forms():
        assert form not in text, f"secret {form!r} leaked into {where}: {text[-2000:]}"


def _assert_no_secret(runs: list[subprocess.CompletedProcess[str]], folder: Path) -> None:
    for r in runs:
        assert "Traceback" not in r.stderr, r.stderr
        _assert_clean(r.stdout, f"stdout of {r.args[3:]}")
        _assert_clean(r.stderr, f"stderr of {r.args[3:]}")
    files = [p for p in folder.rglob("*") if p.is_file()]
    for p in files:
        _assert_clean(p.read_bytes().decode("utf-8", "replace"), str(p))


def _commands(url: str, out: Path) -> list[list[str]]:
    """Every command that talks to a server, with each way of passing a credential."""
    auth = [["--bearer-token", TOKEN], ["--basic-auth", f"{BASIC_USER}:{BASIC_PASS}"]]
    at = ["--at", str(END - 600)]
    cmds = []
    for i, a in enumerate(auth):
        u = _with_userinfo(url)
        cmds += [
            ["probe", "-p", u, *a],
            ["probe", "-p", u, "--json", *a],
            [
                "pull",
                "-p",
                u,
                "--since",
                "1h",
                *at,
                "--baselines",
                "1h",
                "-o",
                str(out / f"b{i}"),
                *a,
            ],
            ["pull", "-p", u, "--since", "1h", *at, "-o", str(out / f"j{i}.tar.gz"), "--json", *a],
            ["diagnose", "-p", u, *at, "-f", "json", *a],
            ["diagnose", "-p", u, *at, "-f", "json", "-o", str(out / f"r{i}.json"), *a],
            ["diagnose", "-p", u, *at, *a],
        ]
    return cmds


@pytest.fixture
def history_server(
    tmp_path: Path, prometheus_with_backfill: Callable[[Sequence[Path]], LocalPrometheus]
) -> Iterator[str]:
    ts = np.arange(END - 3 * 3600, END + 1, STEP)
    store = RawStore()
    for k in range(2):
        store.add_many(
            "vllm:num_requests_waiting",
            labels_of({"instance": f"node-{k}:8000", "job": "vllm"}),
            ts,
            np.full(ts.size, 3.0 + k),
        )
    om = tmp_path / "history.om"
    write_openmetrics(store, om, types={"vllm:num_requests_waiting": "gauge"})
    yield prometheus_with_backfill([om]).url


@pytest.mark.server
def test_no_secret_in_any_output_against_a_real_prometheus(
    history_server: str, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    runs = [_cli(*c, cwd=tmp_path) for c in _commands(history_server, out)]
    assert runs[0].returncode == 0, runs[0].stderr
    assert "127.0.0.1" in runs[0].stdout  # the URL is shown, masked
    pulled = [r for r in runs if r.args[3] == "pull"]
    assert all(r.returncode == 0 for r in pulled), [r.stderr for r in pulled]
    manifest = json.loads((out / "b0" / "manifest.json").read_text())
    assert manifest["source"]["url"].startswith("http://***@127.0.0.1:")
    report = json.loads((out / "r0.json").read_text())
    assert URL_USER not in json.dumps(report.get("source", report))
    _assert_no_secret(runs, tmp_path)


def _echo_500(req: Request) -> Reply:
    """A hostile server: answers 500 with the request's credentials in the error text."""
    return 500, json.dumps(
        {"status": "error", "error": f"bad auth {req.headers.get('Authorization')} for {req.path}"}
    )


@pytest.mark.slow
def test_no_secret_in_any_output_against_a_500_or_unreachable_server(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    runs = []
    with FakeServer(_echo_500) as fake:
        # probe, pull and diagnose -o with a token; pull with basic auth (see _commands)
        for c in [_commands(fake.url, out)[k] for k in (0, 2, 5, 9)]:
            runs.append(_cli(*c, "--timeout", "2", cwd=tmp_path))
    for c in [_commands(f"http://127.0.0.1:{free_port()}", out)[k] for k in (4, 7)]:
        runs.append(_cli(*c, "--timeout", "2", cwd=tmp_path))
    assert all(r.returncode != 0 for r in runs)
    assert any("HTTP 500" in r.stderr for r in runs)
    assert any("cannot reach" in r.stderr for r in runs)
    _assert_no_secret(runs, tmp_path)


@pytest.mark.slow
def test_a_token_with_a_newline_is_invalid_not_unreachable(tmp_path: Path) -> None:
    token = "first-half-s3cret\nsecond-half-s3cret"
    r = _cli(
        "probe", "-p", f"http://127.0.0.1:{free_port()}", "--bearer-token", token, cwd=tmp_path
    )
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert "not a valid HTTP header value" in r.stderr and "line break" in r.stderr
    assert "cannot reach" not in r.stderr
    assert "s3cret" not in r.stderr and r.stderr.strip().count("\n") == 0


def test_a_non_ascii_token_is_one_line() -> None:
    with pytest.raises(BadCredentials, match="non-ASCII"):
        PrometheusClient("http://127.0.0.1:1", bearer_token="tøken")


def test_the_client_never_holds_the_userinfo_for_display() -> None:
    c = PrometheusClient(_with_userinfo("http://127.0.0.1:9090/prom/"))
    assert c.url == "http://127.0.0.1:9090/prom"
    assert c._auth is not None  # the userinfo became basic auth


def test_userinfo_is_sent_as_basic_auth_and_echoes_are_scrubbed() -> None:
    seen: list[str] = []

    def echo(req: Request) -> Reply:
        seen.append(req.headers.get("Authorization", ""))
        return 500, f"denied {req.headers.get('Authorization')} {URL_PASS}"

    with FakeServer(echo) as fake:
        client = PrometheusClient(_with_userinfo(fake.url), retries=0)
        with pytest.raises(ServerError) as exc:
            client.buildinfo()
    assert seen[0] == "Basic " + base64.b64encode(f"{URL_USER}:{URL_PASS}".encode()).decode()
    _assert_clean(str(exc.value), "the error")
    assert "HTTP 500" in str(exc.value)


@pytest.mark.parametrize(
    ("text", "hidden"),
    [
        ("http://u:pa@ss@host:1/x", "pa@ss"),
        ("see https://user:pw@h/p?token=abc123&x=1", "abc123"),
        ("Authorization: Bearer abcdefghijkl", "abcdefghijkl"),
        ("header Bearer abcdefghijkl sent", "abcdefghijkl"),
        ("password=hunter22;", "hunter22"),
    ],
)
def test_redact_text_masks_credentials(text: str, hidden: str) -> None:
    assert hidden not in redact_text(text)
    assert hidden not in redact_url(text) or "Bearer" in text or "password" in text


def test_redactor_scrubs_encoded_forms_of_known_secrets() -> None:
    r = Redactor.for_connection(_with_userinfo("http://h"), TOKEN, (BASIC_USER, BASIC_PASS))
    text = " ".join(_forms())
    assert r.scrub(text).replace("***", "").strip() == ""
