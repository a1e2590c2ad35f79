"""Issue 25 bar, end to end with real parts: Prometheus evaluates a rule that fires on a
backfilled incident → Alertmanager sends the webhook (with a bearer token) → `infersight serve`
captures and diagnoses → a bundle and reports on disk name the incident's root cause."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from alerting_servers import AlertingPrometheus, LocalAlertmanager, ServeProcess, SlackReceiver

from incident_now import incident_now
from infersight.bundle import read_bundle
from servers import require

pytestmark = pytest.mark.server
TOKEN = "am-webhook-t0ken-42"
SLACK_SECRET = "xoxb-sl4ck-s3cret-path"
RULES = """
groups:
  - name: inference
    rules:
      - alert: InferenceQueueBacklog
        # the backlog of the backfilled incident, once infersight serve is up (Prometheus
        # scrapes its /metrics), so that Alertmanager's first post finds it listening
        expr: >
          sum(max_over_time(vllm:num_requests_waiting[10m])) > 100
          and on() (up{job="watched"} == 1)
        labels: {severity: page, team: ml-platform}
        annotations: {summary: requests pile up in the engines' queues}
"""


def _alertmanager_config(serve_url: str, token_file: Path) -> str:
    return f"""
route:
  receiver: infersight
  group_by: [alertname]
  group_wait: 1s
  group_interval: 5s
  repeat_interval: 1h
receivers:
  - name: infersight
    webhook_configs:
      - url: {serve_url}/alerts
        send_resolved: true
        http_config:
          authorization:
            credentials_file: {token_file}
"""


def _wait_until(ok: Callable[[], bool], timeout: float = 30.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if ok():
            return True
        time.sleep(0.2)
    return False


def _wait_for(path_glob: Path, pattern: str, timeout: float = 120.0) -> list[Path]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = sorted(path_glob.glob(pattern))
        if found:
            return found
        time.sleep(0.5)
    return []


def test_an_alert_from_prometheus_through_alertmanager_ends_as_a_diagnosed_bundle(
    tmp_path: Path,
) -> None:
    for name in ("prometheus", "promtool", "prometheus-alertmanager"):
        require(name)
    om, _end = incident_now(tmp_path)
    token_file = tmp_path / "webhook-token"
    token_file.write_text(TOKEN + "\n")
    out = tmp_path / "captures"
    config = tmp_path / "serve.yaml"
    slack = SlackReceiver()
    hook = f"{slack.url}/services/T0/B0/{SLACK_SECRET}"
    config.write_text(
        f"auth: {{bearer_token_file: {token_file}}}\n"
        f"slack: {{webhook_url: '{hook}'}}\n"
        "capture: {since: 1h, baselines: [1h], part_timeout: 60s}\n"
        f"out_dir: {out}\nmax_concurrency: 1\nqueue_size: 4\n"
    )
    # the wiring is a circle (serve reads Prometheus, which sends to Alertmanager, which posts
    # to serve): serve's port is chosen first, its Prometheus given through the environment
    serve = ServeProcess(config, tmp_path)
    am_config = _alertmanager_config(serve.url, token_file)
    with slack, LocalAlertmanager(am_config) as am:
        scrape = serve.url.removeprefix("http://")
        prom = AlertingPrometheus(
            rules=RULES, alertmanager_url=am.url, backfill=[om], scrape=scrape
        )
        with prom:
            serve.env["INFERSIGHT_SERVE__PROMETHEUS__URL"] = prom.url
            with serve:
                reports = _wait_for(out, "*/report.json")
                posted = _wait_until(lambda: bool(slack.posts))
                assert reports, (
                    f"no report after 120 s; serve log: {serve.log.read_text()[-3000:]}\n"
                    f"alertmanager log: {am.log_tail(20)}"
                )
                # the page lists the capture and links its reports
                auth = {"Authorization": f"Bearer {TOKEN}"}
                page = httpx.get(serve.url + "/", headers=auth, timeout=10).text
                metrics = httpx.get(serve.url + "/metrics", timeout=10).text
    folder = reports[0].parent
    assert folder.name.split("-", 1)[1].startswith("InferenceQueueBacklog")
    doc = json.loads(reports[0].read_text())
    roots = [r["hypothesis"] for r in doc["root_causes"]]
    assert {"vector_db_swap", "cache_capacity"} <= set(roots[:2]), roots
    md = (folder / "report.md").read_text()
    assert "vector DB" in md
    assert (folder / "report.html").read_text().startswith("<!")
    bundle = read_bundle(folder / "bundle.tar.gz")
    assert bundle.manifest.source["kind"] == "capture"
    scope = json.loads(bundle.manifest.source["scope"])
    assert scope["alertname"] == "InferenceQueueBacklog"
    assert {"incident", "baseline-1h"} <= set(bundle.windows)
    diagnosis = json.loads(bundle.read_artifact("diagnosis.json"))
    assert [r["hypothesis"] for r in diagnosis["root_causes"]] == roots
    assert f"captures/{folder.name}/report.html" in page
    assert 'infersight_serve_notifications_total{result="accepted"} 1.0' in metrics
    # a short summary went to the Slack-compatible webhook, linking the report
    assert posted and len(slack.posts) == 1
    text = slack.posts[0]["text"]
    assert text.startswith("[infersight] InferenceQueueBacklog: vector_db_swap, cache_capacity")
    assert f"/captures/{folder.name}/report.html" in text
    # the webhook token and the Slack URL's secret never reach the log, the bundle or the reports
    for text in (serve.log.read_text(), md, reports[0].read_text(), page):
        assert TOKEN not in text and SLACK_SECRET not in text
