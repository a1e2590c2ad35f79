"""Rendering rules and the dashboard: what they contain, and promtool's verdict on them."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
import yaml

from infersight.alerts import dashboard
from infersight.alerts.render import ALERTS_FILE, RECORDING_FILE, UnknownFamilyError, build, choose
from infersight.alerts.replay import hold, inline
from infersight.exporters import load_catalog
from infersight.promql import parse
from infersight.signals import Layer
from servers import require

ALL = sorted(load_catalog().families)


def test_recording_rule_per_signal_with_alternatives_in_priority_order() -> None:
    rules = build(choose(load_catalog(), ["vllm", "dcgm"]))
    recs = {r.record: r.expr for r in rules.recording[0].rules}
    itl = recs["infersight:service_itl_p99"]
    # both vLLM names for inter-token latency, the new one first, and a host label cut out
    assert itl.index("inter_token_latency") < itl.index("time_per_output_token")
    assert '"host", "$1", "instance"' in itl
    assert "infersight:infra_gpu_temp_c" in recs


def test_known_metric_names_keep_only_answerable_alternatives() -> None:
    catalog = load_catalog()
    names = {"vllm:num_requests_waiting", "vllm:time_per_output_token_seconds_bucket"}
    rules = build(choose(catalog, ["vllm"]), names)
    recs = {r.record: r.expr for r in rules.recording[0].rules}
    assert set(recs) == {"infersight:service_queue_length", "infersight:service_itl_p99"}
    assert "inter_token_latency" not in recs["infersight:service_itl_p99"]
    # no e2e histogram, no error counter: both burn-rate alerts are left out, and said so
    assert any(s.startswith("InferErrorBudgetBurn") for s in rules.skipped)
    assert "InferQueueGrowingGPUIdle" not in rules.alerts  # no GPU exporter for the idle half


def test_latency_slo_reads_the_histogram_bucket_at_the_threshold() -> None:
    rules = build(choose(load_catalog(), ["vllm"]))
    slo = {r.record: r.expr for r in rules.recording[1].rules}
    expr = slo["infersight:slo_slow:ratio_rate1h"]
    assert 'vllm:e2e_request_latency_seconds_bucket{le=~"2\\\\.50*"}' in expr
    assert "vllm:e2e_request_latency_seconds_count[1h]" in expr
    parse(expr)


def test_unknown_family_is_refused_with_the_known_ones() -> None:
    with pytest.raises(UnknownFamilyError, match="nope; known: cadvisor, dcgm"):
        choose(load_catalog(), ["vllm", "nope"])


def test_inline_turns_recorded_ranges_into_subqueries() -> None:
    rules = build(choose(load_catalog(), ["redis"]))
    expr = "avg_over_time(infersight:dependency_cache_hit_ratio[30m] offset 23h45m) < 1"
    out = inline(expr, rules.recording, "1m")
    assert "infersight:" not in out
    assert ")[30m:1m] offset 23h45m) < 1" in out


def test_hold_applies_for_as_the_rule_manager_does() -> None:
    ts = np.array([0, 60, 120, 180, 240, 600, 660], dtype=float)
    # present 0..240 (4 minutes after its first), gone, back at 600 for one minute
    assert hold(ts, 60.0, 180.0) == [(180.0, 240.0)]
    assert hold(ts, 60.0, 0.0) == [(0.0, 240.0), (600.0, 660.0)]
    assert hold(ts, 60.0, 300.0) == []


@pytest.mark.slow
@pytest.mark.parametrize(
    "families", [ALL, ["vllm", "dcgm", "node", "redis", "qdrant"], ["triton", "dcgm"], ["tgi"]]
)
def test_promtool_check_rules_accepts_every_file(tmp_path: Path, families: list[str]) -> None:
    require("promtool")
    rules = build(choose(load_catalog(), families))
    for name, text in rules.files().items():
        (tmp_path / name).write_text(text)
        assert yaml.safe_load(text)["groups"]
    res = subprocess.run(
        [shutil.which("promtool") or "promtool", "check", "rules",
         str(tmp_path / RECORDING_FILE), str(tmp_path / ALERTS_FILE)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert res.returncode == 0, res.stdout + res.stderr


def test_dashboard_rows_follow_the_layers_with_yesterday_overlaid() -> None:
    text = dashboard.to_json(dashboard.build())
    assert dashboard.validate(text) == []
    data = json.loads(text)
    rows = [p["title"] for p in data["panels"] if p["type"] == "row"]
    assert rows == [f"{layer.order + 1}. {layer.value}" for layer in Layer]
    panels = [p for p in data["panels"] if p["type"] == "timeseries"]
    for p in panels:
        a, b = (t["expr"] for t in p["targets"])
        assert b == a + " offset 1d"
    assert {v["name"] for v in data["templating"]["list"]} == {"datasource", "instance", "model"}


def test_dashboard_for_some_signals_and_a_damaged_one_is_caught() -> None:
    text = dashboard.to_json(dashboard.build(["service.queue_length", "infra.gpu_temp_c"]))
    data = json.loads(text)
    assert [p["title"] for p in data["panels"]] == [
        "2. service", "service.queue_length", "5. infrastructure", "infra.gpu_temp_c",
    ]  # fmt: skip
    data["panels"][1]["targets"][0]["expr"] = "rate(x[5m]"
    assert any("rate(x[5m]" in p for p in dashboard.validate(json.dumps(data)))
    data["panels"][1]["targets"][0]["expr"] = "up"
    data["panels"][1]["gridPos"] = "top left"  # not the SDK's GridPos
    assert dashboard.validate(json.dumps(data)) == [
        "the JSON does not round-trip through the SDK's Dashboard type"
    ]
