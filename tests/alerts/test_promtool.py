"""The promtool unit tests in tests/alerts/promtool/, run against freshly rendered rules: each
alert fires on its incident and stays quiet through a normal day's swing. Each file is run
against the rules for its stack: an engine's own histograms, or a gateway's in front of it."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from infersight.alerts.render import ALERTS_FILE, build, choose
from infersight.exporters import load_catalog
from servers import require

HERE = Path(__file__).parent / "promtool"
TESTS = sorted(HERE.glob("*.test.yml"))
#: every family but the one with a gateway latency histogram: the SLO reads the engine's
ENGINE = sorted(set(load_catalog().families) - {"ingress_nginx"})
#: the issue's stack: vLLM, ingress-nginx, Redis, Qdrant, dcgm-exporter, node_exporter
GATEWAY = ["vllm", "ingress_nginx", "redis", "qdrant", "dcgm", "node"]
STACKS = {"ingress_stack.test.yml": GATEWAY}


def _rendered(folder: Path, test_file: str = "") -> set[str]:
    rules = build(choose(load_catalog(), STACKS.get(test_file, ENGINE)))
    (folder / ALERTS_FILE).write_text(rules.files()[ALERTS_FILE])
    return set(rules.alerts)


@pytest.mark.slow
@pytest.mark.parametrize("test_file", TESTS, ids=[t.name for t in TESTS])
def test_promtool_unit_tests_pass(tmp_path: Path, test_file: Path) -> None:
    require("promtool")
    _rendered(tmp_path, test_file.name)
    shutil.copy(test_file, tmp_path / test_file.name)
    res = subprocess.run(
        [shutil.which("promtool") or "promtool", "test", "rules", test_file.name],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert res.returncode == 0, res.stdout + res.stderr


def test_every_alert_has_a_firing_case_and_a_quiet_case(tmp_path: Path) -> None:
    fires: set[str] = set()
    quiet: set[str] = set()
    for path in TESTS:
        for group in yaml.safe_load(path.read_text())["tests"]:
            for case in group["alert_rule_test"]:
                (fires if case["exp_alerts"] else quiet).add(case["alertname"])
    alerts = set().union(*(_rendered(tmp_path, t.name) for t in TESTS))
    assert "InferGatewayLatencyP99Deviation" in alerts
    assert alerts - fires == set()
    assert alerts - quiet == set()
