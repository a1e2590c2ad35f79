"""An empty window says so (issue 39): a real Prometheus holding a vLLM fleet whose data ended
two days ago, asked about the last hour, answers "cannot judge" naming the families it holds
and the newest sample's time, with the `--at` to use, not "the source holds no metric of a
known exporter" right after `probe` found them; with that `--at` the window is judged, and
`probe --at` shows what that window holds."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from infersight.lab.live.servers import LocalPrometheus
from infersight.lab.sim.outputs import write_sim_openmetrics
from infersight.lab.sim.run import simulate
from infersight.timeparse import parse_time

pytestmark = [pytest.mark.server, pytest.mark.slow, pytest.mark.sim]

STEP = 15.0
AT = re.compile(r"the newest sample is at (\S+): try --at (\S+)$")


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", "from infersight.cli import main; main()", *args],
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_an_empty_window_gives_the_newest_sample_and_the_at_to_use(
    tmp_path: Path, prometheus_with_backfill: Callable[[Sequence[Path]], LocalPrometheus]
) -> None:
    end = (time.time() // STEP) * STEP - 2 * 86400  # the data ends two days ago
    res = simulate("incident_0217", hours=3, instances=2, seed=1, start=end - 3 * 3600)
    om = tmp_path / "old.om"
    write_sim_openmetrics(res, om, "vllm")
    newest = max(
        float(line.rsplit(" ", 1)[1])
        for line in om.read_text().splitlines()
        if line and not line.startswith("#")
    )
    prom = prometheus_with_backfill([om])

    probe = cli("probe", "-p", prom.url, "-f", "json")
    assert probe.returncode == 0, probe.stderr
    assert "vllm" in json.loads(probe.stdout)["families"]

    for command in ("diagnose", "detect"):
        r = cli(command, "-p", prom.url)
        assert r.returncode == 3, (command, r.stdout, r.stderr)
        lines = [line for line in r.stderr.splitlines() if line.strip()]
        assert len(lines) == 1 and lines[0].startswith("cannot judge: "), r.stderr
        assert "no metric of a known exporter" not in lines[0]
        assert "but the server holds" in lines[0] and "vllm" in lines[0], lines[0]
        m = AT.search(lines[0].rstrip("."))
        assert m is not None, lines[0]
        assert m.group(1) == m.group(2)
        assert parse_time(m.group(1)) == newest, (m.group(1), newest)

    doc = json.loads(cli("diagnose", "-p", prom.url, "-f", "json").stdout)
    assert doc["judged"] is False and "the newest sample is at" in doc["summary"]

    m = AT.search(lines[0].rstrip("."))
    assert m is not None
    judged = cli("diagnose", "-p", prom.url, "--at", m.group(2), "-f", "json")
    assert judged.returncode in (0, 1), judged.stderr
    assert json.loads(judged.stdout)["judged"] is True

    # probe takes --at too: what the window of a `diagnose --at` holds
    for at, families in (("now", []), (m.group(2), ["vllm"])):
        r = cli("probe", "-p", prom.url, "--at", at, "-f", "json")
        assert r.returncode == 0, r.stderr
        assert set(families) <= set(json.loads(r.stdout)["families"]), (at, r.stdout[:300])
        if not families:
            assert json.loads(r.stdout)["families"] == []
