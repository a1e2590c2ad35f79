"""The rendered rules in a real Prometheus, over backfilled simulated incidents: each fires the
alerts its scenario should, and only those; a healthy day fires none. And the dashboard's
queries, run against the recorded signals, return data now and a day earlier."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from infersight.alerts import dashboard
from infersight.alerts.backtest import EXPECTED, BacktestConfig, detected_rules, run_scenario
from infersight.alerts.render import RECORDING_FILE, write
from infersight.lab.live.servers import LocalPrometheus
from infersight.lab.sim.outputs import write_sim_openmetrics
from infersight.lab.sim.run import simulate
from infersight.sources.prometheus import PrometheusClient
from servers import require

pytestmark = [pytest.mark.server, pytest.mark.slow, pytest.mark.sim]

#: a healthy day, one cause per layer the alerts watch, and the seed's compound incident; the
#: full sweep over every scenario is `python -m bench.alerts_backtest`
SCENARIOS = ["healthy_diurnal", "vector_db_swap", "gpu_thermal_throttling", "incident_0217"]


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_backfilled_incident_fires_its_alerts_and_only_those(scenario: str, tmp_path: Path) -> None:
    require("prometheus")
    require("promtool")
    out = run_scenario(scenario, seed=1, workdir=tmp_path)
    assert out.missed == [], out.to_dict()
    assert out.unexpected == [], out.to_dict()
    if scenario.startswith("healthy"):
        assert out.fired == {}
        return
    must, _ = EXPECTED[scenario]
    assert must
    assert out.onset is not None
    # nothing fires before the fault: the alerts answer the incident, not the day's swing
    assert min(out.fired.values()) >= out.onset, out.to_dict()


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", "from infersight.cli import main; main()", *args],
        capture_output=True, text=True, timeout=300, env={**os.environ, "COLUMNS": "200"},
    )  # fmt: skip


def _record(prom: LocalPrometheus, rules_file: Path, start: float, end: float, out: Path) -> None:
    """Evaluate the recording rules over [start, end] with promtool, into blocks under `out`."""
    res = subprocess.run(
        [shutil.which("promtool") or "promtool", "tsdb", "create-blocks-from", "rules",
         f"--url={prom.url}", f"--start={int(start)}", f"--end={int(end)}",
         "--eval-interval=60s", f"--output-dir={out}", str(rules_file)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr


def test_dashboard_queries_return_data_from_recorded_rules(tmp_path: Path) -> None:
    require("prometheus")
    require("promtool")
    cfg = BacktestConfig()
    res = simulate("incident_0217", cfg.hours, cfg.instances, 1, step=60, history_h=cfg.history_h)
    data = tmp_path / "run.om"
    write_sim_openmetrics(res, data, "vllm")
    last = float(res.times[-1])
    end = last - 600
    workdir = tmp_path / "prom"
    blocks = tmp_path / "blocks"
    with LocalPrometheus(backfill=[data], workdir=workdir) as prom:
        rules = detected_rules(PrometheusClient(prom.url), float(res.times[0]), last)
        write(rules, tmp_path / "rules")
        for lo in (end - 86400.0 - 1800.0, end - 1800.0):  # the last half hour, and yesterday's
            _record(prom, tmp_path / "rules" / RECORDING_FILE, lo, lo + 1800.0, blocks)
    for block in blocks.iterdir():
        shutil.move(str(block), str(workdir / "data" / block.name))
    text = dashboard.to_json(dashboard.build(rules.signals))
    assert dashboard.validate(text) == []
    exprs = dashboard.panel_queries(json.loads(text))
    assert len(exprs) == 2 * len(rules.signals)
    with LocalPrometheus(workdir=workdir) as prom:
        # the commands, detecting the exporters on this server
        made = _cli("alerts", "render", "-p", prom.url, "-o", str(tmp_path / "cli"), "-f", "json")
        assert made.returncode == 0, made.stderr
        assert {"vllm", "dcgm", "node", "redis"} <= set(json.loads(made.stdout)["families"])
        dash = _cli("dashboards", "render", "-p", prom.url, "-o", str(tmp_path / "d.json"))
        assert dash.returncode == 0, dash.stderr
        assert json.loads((tmp_path / "d.json").read_text()) == json.loads(text)
        client = PrometheusClient(prom.url)
        empty = []
        for expr in exprs:
            q = expr.replace("$instance", ".*").replace("$model", ".*")
            if not client.query_range(q, end - 1200.0, end, 60.0):
                empty.append(expr)
    # the seed's soft metrics (§6.1) are all there, today and yesterday
    for sig in (
        "service.e2e_latency_p99", "service.queue_length", "inference.gpu_util",
        "inference.gpu_mem_used_ratio", "dependency.vector_query_p99",
        "dependency.cache_hit_ratio", "infra.gpu_temp_c", "infra.gpu_sm_clock_mhz",
    ):  # fmt: skip
        now, before = dashboard.queries(sig)
        assert now not in empty and before not in empty, sig
    assert len(empty) <= len(exprs) // 5, empty
