"""`serve` facing a hostile sender and a curious passer-by: the page, reports and bundles ask
the webhook's credentials unless a proxy in front is declared; labels built to forge log lines,
drive a terminal or ping a Slack channel are shown as typed; a token read from a file is in no
log and no bundle."""

from __future__ import annotations

import io
import json
import logging
import tarfile
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from alerting_servers import ServeProcess, SlackReceiver
from inprocess import running
from notifications import notification

from infersight.serve.alerts import Notification
from infersight.serve.app import create_app
from infersight.serve.config import ServeConfig
from infersight.serve.dispatch import Dispatcher, Job, Outcome
from infersight.serve.jobs import summary_text
from infersight.serve.logsafe import SafeLines

TOKEN = "hostile-hook-token-5150"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
FORGED = "2026-12-02 02:17:00,000 INFO infersight.serve: capture 1 done: all clear"
HOSTILE = f"Backlog\x1b[2J\x1b]0;owned\x07\n{FORGED} <!channel> <http://evil.example|click> &"


def _writes_a_bundle(out_dir: Path) -> Callable[[Job], Outcome]:
    def runner(job: Job) -> Outcome:
        bundle = out_dir / job.id / "bundle.tar.gz"
        bundle.parent.mkdir(parents=True)
        bundle.write_bytes(b"logs and stacks")
        return Outcome(bundle, {}, ["vector_db_swap"], "done")

    return runner


def _until(ok: Callable[[], bool], timeout: float = 60.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if ok():
            return True
        time.sleep(0.1)
    return False


def _one_capture(url: str, d: Dispatcher) -> str:
    body = json.dumps(notification("g1", ["a"]))
    r = httpx.post(url + "/alerts", content=body, headers=AUTH, timeout=10)
    assert r.json()["status"] == "accepted"
    capture = str(r.json()["capture"])
    assert _until(lambda: d.records[capture].status == "done")
    return capture


def test_the_page_reports_and_bundles_ask_for_the_webhooks_credentials_by_default(
    tmp_path: Path,
) -> None:
    cfg = ServeConfig.model_validate({"auth": {"bearer_token": TOKEN}, "out_dir": str(tmp_path)})
    app = create_app(cfg, _writes_a_bundle(tmp_path))
    with running(app) as url:
        capture = _one_capture(url, app.state.dispatcher)
        bundle = f"{url}/captures/{capture}/bundle.tar.gz"
        for page in (url + "/", bundle, f"{url}/captures/{capture}/report.md"):
            r = httpx.get(page, timeout=10)
            assert r.status_code == 401 and r.headers["www-authenticate"].startswith("Bearer")
            assert b"logs and stacks" not in r.content
            wrong = httpx.get(page, headers={"Authorization": "Bearer nope-0000"}, timeout=10)
            assert wrong.status_code == 401
        assert httpx.get(bundle, headers=AUTH, timeout=10).content == b"logs and stacks"
        assert capture in httpx.get(url + "/", headers=AUTH, timeout=10).text
        # probes and Prometheus need no credentials: neither answer holds anything of an alert
        health = httpx.get(url + "/healthz", timeout=10)
        metrics = httpx.get(url + "/metrics", timeout=10)
    assert health.status_code == 200 and metrics.status_code == 200
    for text in (health.text, metrics.text):
        assert "InferenceQueueBacklog" not in text and capture not in text


def test_pages_false_opens_them_for_a_proxy_that_authenticates(tmp_path: Path) -> None:
    cfg = ServeConfig.model_validate(
        {"auth": {"bearer_token": TOKEN, "pages": False}, "out_dir": str(tmp_path)}
    )
    app = create_app(cfg, _writes_a_bundle(tmp_path))
    with running(app) as url:
        capture = _one_capture(url, app.state.dispatcher)
        assert httpx.get(url + "/", timeout=10).status_code == 200
        r = httpx.get(f"{url}/captures/{capture}/bundle.tar.gz", timeout=10)
        assert r.content == b"logs and stacks"
        # the webhook still asks
        body = json.dumps(notification("g2", ["b"]))
        assert httpx.post(url + "/alerts", content=body, timeout=10).status_code == 401


def test_a_slack_summary_shows_labels_as_typed() -> None:
    parsed = Notification.model_validate(notification("g1", ["a"], alertname=HOSTILE))
    job = Job(
        "id-1", parsed.groupKey, parsed.starts_at(), parsed.scope(), parsed, parsed.starts_at()
    )
    text = summary_text(job, Outcome(None, {}, ["a<b"], "x & y"), "https://i.example/")
    assert "<" not in text and ">" not in text and "\n" not in text and "\x1b" not in text
    assert "&lt;!channel&gt; &lt;http://evil.example|click&gt; &amp;" in text
    assert "a&lt;b. x &amp; y https://i.example/captures/id-1/report.html" in text


@pytest.mark.slow
def test_hostile_labels_forge_no_log_line_and_no_secret_leaves(tmp_path: Path) -> None:
    token_file = tmp_path / "webhook-token"
    token_file.write_text(TOKEN + "\n")
    app_log = tmp_path / "engine.log"
    app_log.write_text(f"WARNING a client sent {TOKEN} as its model name\n")  # echoed bare
    out = tmp_path / "captures"
    slack = SlackReceiver()
    config = tmp_path / "serve.yaml"
    config.write_text(
        f"auth: {{bearer_token_file: {token_file}}}\n"
        f"slack: {{webhook_url: '{slack.url}/services/T0/B0/slack-path-s3cret'}}\n"
        f"capture: {{since: 10m, baselines: [], logs: ['{app_log}'], part_timeout: 60s}}\n"
        f"out_dir: {out}\n"
    )
    body = json.dumps(notification("g1", ["a"], alertname=HOSTILE))
    with slack, ServeProcess(config, tmp_path) as serve:
        r = httpx.post(serve.url + "/alerts", content=body, headers=AUTH, timeout=10)
        assert r.json()["status"] == "accepted", r.text
        # a request path decoded into the access log: %0A is a newline there
        forged_path = "/captures/x%0A" + FORGED.replace(" ", "%20") + "/report.md"
        assert httpx.get(serve.url + forged_path, timeout=10).status_code in (401, 404)
        assert _until(lambda: bool(slack.posts) and bool(list(out.glob("*/bundle.tar.gz"))))
    log = serve.log.read_text()
    lines = log.splitlines()
    assert "\x1b" not in log and "\x07" not in log
    assert not [line for line in lines if line.startswith(FORGED[:23])], log[-3000:]
    assert "\\x1b[2J" in log and "\\x0a" in log  # shown, escaped, on the line they came in
    (bundle,) = out.glob("*/bundle.tar.gz")
    with tarfile.open(bundle) as tar:
        members = {m.name: tar.extractfile(m).read() for m in tar.getmembers() if m.isfile()}  # type: ignore[union-attr]
    assert b"as its model name" in members["artifacts/logs/0-engine.log"]
    (post,) = slack.posts
    assert "<" not in post["text"] and "&lt;!channel&gt;" in post["text"]
    reports = [p.read_text() for p in out.rglob("report.*")]
    assert len(reports) == 3
    shown = [log, post["text"], *reports, *(m.decode("utf-8", "replace") for m in members.values())]
    for text in shown:
        assert TOKEN not in text and "slack-path-s3cret" not in text


def test_a_logged_traceback_keeps_its_lines_but_no_secret_or_escape() -> None:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.addFilter(SafeLines(["tb-secret-0042"]))
    logger = logging.Logger("serve-test")
    logger.addHandler(handler)
    try:
        raise ValueError("label \x1b[31mred\x1b[0m and tb-secret-0042")
    except ValueError:
        logger.exception("capture %s failed", "a\nb")
    text = stream.getvalue()
    assert "\x1b" not in text and "tb-secret-0042" not in text
    assert text.startswith("capture a\\x0ab failed\nTraceback")
    assert "ValueError: label \\x1b[31mred\\x1b[0m and ***" in text
