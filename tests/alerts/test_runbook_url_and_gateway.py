"""Alerts an on-call can act on: each carries `runbook_url` (the annotation Alertmanager
templates and Grafana link) to its runbook's section of the runbooks page, under a base URL
one can set; latency alerts are built from the gateway's histogram where one exists."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from pydantic import ValidationError

from infersight.alerts.config import AlertsConfig
from infersight.alerts.render import ALERTS_FILE, RECORDING_FILE, build, choose
from infersight.exporters import load_catalog
from servers import require

ROOT = Path(__file__).resolve().parents[2]
#: what `probe` found on the issue's server: vLLM with no end-to-end latency histogram (so
#: the engine's P99 and the latency budget had nothing to read), ingress-nginx with its own
NAMES = {
    "vllm:num_requests_running", "vllm:num_requests_waiting",
    "vllm:time_to_first_token_seconds_bucket", "vllm:gpu_cache_usage_perc",
    "nginx_ingress_controller_requests",
    "nginx_ingress_controller_request_duration_seconds_bucket",
    "nginx_ingress_controller_request_duration_seconds_count",
    "nginx_ingress_controller_response_duration_seconds_bucket",
    "redis_up", "redis_keyspace_hits_total", "redis_keyspace_misses_total",
    "DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_FB_FREE",
}  # fmt: skip
STACK = ["vllm", "ingress_nginx", "redis", "dcgm"]


def _alerts(rules: object) -> list[dict[str, object]]:
    files = rules.files()  # type: ignore[attr-defined]
    groups = yaml.safe_load(files[ALERTS_FILE])["groups"]
    return [r for g in groups for r in g["rules"]]


def _anchors() -> set[str]:
    """The sections of docs/runbooks.md, as the anchors a Markdown renderer gives them."""
    text = (ROOT / "docs" / "runbooks.md").read_text()
    heads = re.findall(r"^#{2,4} (.+)$", text, flags=re.M)
    return {re.sub(r"[^a-z0-9 -]", "", h.strip().lower()).replace(" ", "-") for h in heads}


def test_latency_alerts_read_the_gateway_histogram_when_the_engine_has_none() -> None:
    rules = build(choose(load_catalog(), STACK), NAMES)
    assert "InferGatewayLatencyP99Deviation" in rules.alerts
    assert "InferLatencyBudgetBurn" in rules.alerts
    assert not any(s.startswith("InferLatencyBudgetBurn") for s in rules.skipped)
    slow = {r.record: r.expr for g in rules.recording for r in g.rules}
    expr = slow["infersight:slo_slow:ratio_rate1h"]
    assert "nginx_ingress_controller_request_duration_seconds_bucket" in expr
    burn = [r for r in _alerts(rules) if r["alert"] == "InferLatencyBudgetBurn"]
    assert all("at the gateway" in str(r["annotations"]) for r in burn)  # type: ignore[index]


def test_the_gateway_histogram_is_preferred_where_the_engine_has_one_too() -> None:
    rules = build(choose(load_catalog(), ["vllm", "ingress_nginx"]))
    slow = {r.record: r.expr for g in rules.recording for r in g.rules}
    expr = slow["infersight:slo_slow:ratio_rate1h"]
    assert "nginx_ingress_controller" in expr and "vllm:" not in expr
    # the engine's own P99 alert stays: it says which engine, the gateway's what users felt
    assert {"InferLatencyP99Deviation", "InferGatewayLatencyP99Deviation"} <= set(rules.alerts)


def test_every_alert_links_its_runbook_section_on_the_runbooks_page() -> None:
    rules = build(choose(load_catalog(), sorted(load_catalog().families)))
    anchors = _anchors()
    alerts = _alerts(rules)
    assert len(alerts) >= 12
    for rule in alerts:
        notes = rule["annotations"]
        url = notes["runbook_url"]  # type: ignore[index]
        base, _, anchor = url.partition("#")
        assert base == "docs/runbooks.md", url
        runbook = notes["runbook"]  # type: ignore[index]
        if not runbook.startswith("none"):
            assert anchor == runbook, url
        assert anchor in anchors, f"{rule['alert']}: no section {anchor!r} in docs/runbooks.md"


def test_the_runbook_base_url_is_set_in_one_place_and_checked() -> None:
    cfg = AlertsConfig(runbook_base_url="https://wiki.example/ops/infersight-runbooks")
    rules = build(choose(load_catalog(), ["dcgm"]), None, cfg)
    urls = {r["annotations"]["runbook_url"] for r in _alerts(rules)}  # type: ignore[index]
    assert "https://wiki.example/ops/infersight-runbooks#drain-node" in urls
    for bad in ("", "https://x/a b", "https://x/#frag", 'x"y', "javascript:alert(1)", "{{ $x }}"):
        with pytest.raises(ValidationError):
            AlertsConfig(runbook_base_url=bad)


def test_the_cli_refuses_a_bad_runbook_url_in_one_line(tmp_path: Path) -> None:
    res = subprocess.run(
        [sys.executable, "-m", "infersight", "alerts", "render", "-e", "vllm", "-o",
         str(tmp_path / "rules"), "--runbook-url", "https://wiki.example/a page"],
        capture_output=True, text=True, timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
    )  # fmt: skip
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert res.returncode == 2 and len(lines) == 1 and "--runbook-url" in lines[0], res.stderr
    assert not (tmp_path / "rules").exists()  # refused before anything was written


@pytest.mark.slow
def test_promtool_accepts_the_rules_rendered_for_the_gateway_stack(tmp_path: Path) -> None:
    require("promtool")
    cfg = AlertsConfig(runbook_base_url="https://wiki.example/runbooks")
    rules = build(choose(load_catalog(), STACK), NAMES, cfg)
    for name, text in rules.files().items():
        (tmp_path / name).write_text(text)
    res = subprocess.run(
        [shutil.which("promtool") or "promtool", "check", "rules",
         str(tmp_path / RECORDING_FILE), str(tmp_path / ALERTS_FILE)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert res.returncode == 0, res.stdout + res.stderr
