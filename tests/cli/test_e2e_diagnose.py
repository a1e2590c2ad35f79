"""Issue bar: a real Prometheus holding a backfilled simulated incident gives the same answer
as the bundle made from the same history, and the demo names both roots of 02:17."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
from typer.testing import CliRunner

from infersight.bundle import write_bundle
from infersight.cli import app
from infersight.cli.common import EXIT_USAGE, CommandError
from infersight.lab.live.servers import LocalPrometheus
from infersight.lab.sim.outputs import incident_end, sim_frame, write_sim_openmetrics
from infersight.lab.sim.run import simulate
from infersight.timeparse import iso
from infersight.windows import cut_windows

pytestmark = pytest.mark.sim

runner = CliRunner()


def _roots(args: list[str]) -> list[str]:
    res = runner.invoke(app, [*args, "--format", "json"])
    assert res.exit_code in (0, 1), res.output
    doc = json.loads(res.stdout)
    return [r["hypothesis"] for r in doc["root_causes"]]


@pytest.mark.server
def test_live_prometheus_and_bundle_give_the_same_diagnosis(
    tmp_path: Path, prometheus_with_backfill: Callable[[Sequence[Path]], LocalPrometheus]
) -> None:
    res = simulate("incident_0217", hours=3, instances=3, seed=4)
    end = incident_end(res)
    om = tmp_path / "0217.om"
    write_sim_openmetrics(res, om, "vllm")
    prom = prometheus_with_backfill([om])

    bundle = tmp_path / "0217.tar.gz"
    windows = cut_windows(sim_frame(res, "vllm"), end, 3600.0, shifts_s=(3600.0,))
    write_bundle(bundle, windows, {"kind": "test"})

    offline = _roots(["diagnose", str(bundle)])
    live = _roots(["diagnose", "-p", prom.url, "--at", iso(end), "--window", "1h"])
    assert {"vector_db_swap", "cache_capacity"} <= set(offline[:2])
    assert live == offline
    # a shorter rate window reads the same history at a finer grain: same causes, and the
    # report says which window its rates were taken over
    args = ["diagnose", "-p", prom.url, "--at", iso(end), "--window", "1h"]
    short = runner.invoke(app, [*args, "--rate-window", "1m", "--format", "json"])
    doc = json.loads(short.stdout)
    assert doc["source"]["rate_window"] == "1m"
    assert {"vector_db_swap", "cache_capacity"} <= {r["hypothesis"] for r in doc["root_causes"][:2]}
    refused = runner.invoke(app, ["diagnose", str(bundle), "--rate-window", "1m"])
    assert isinstance(refused.exception, CommandError) and refused.exception.code == EXIT_USAGE
    assert "a bundle's rates are already in it" in refused.exception.message
    # the grid is the user's to choose on a live pull, and a bundle's own
    coarse = runner.invoke(app, [*args, "--step", "1m", "--format", "json"])
    doc = json.loads(coarse.stdout)
    assert doc["step"] == 60.0 and all(q["step"] == 60.0 for q in doc["queries_run"])
    assert {"vector_db_swap", "cache_capacity"} <= {r["hypothesis"] for r in doc["root_causes"][:2]}
    refused = runner.invoke(app, ["diagnose", str(bundle), "--step", "5s"])
    assert isinstance(refused.exception, CommandError) and refused.exception.code == EXIT_USAGE
    assert "a bundle's grid is already in it" in refused.exception.message


def test_demo_names_both_roots_and_writes_its_files(tmp_path: Path) -> None:
    res = runner.invoke(app, ["demo", "--out-dir", str(tmp_path)], env={"COLUMNS": "120"})
    assert res.exit_code == 0, res.output
    assert "The vector DB" in res.stdout and "cache" in res.stdout
    html = (tmp_path / "demo-0217.html").read_text("utf-8")
    assert "<svg" in html and "vectordb-0" in html
    assert (tmp_path / "demo-0217.tar.gz").stat().st_size > 10_000
    # the chain of seed §5.2: the slow dependency backs up the queue, waiting work holds VRAM,
    # and the GPU is fed less
    doc = json.loads(
        runner.invoke(app, ["diagnose", str(tmp_path / "demo-0217.tar.gz"), "-f", "json"]).stdout
    )
    chains = {r["hypothesis"]: r["chain"] for r in doc["root_causes"]}
    # exactly those two: batches that grew behind the backlog are the dependency's effect,
    # not a max batch set too large
    assert set(chains) == {"vector_db_swap", "cache_capacity"}, list(chains)
    # what the chains reach is explained: no cause upstream of it is left to name as unchecked
    assert doc["unchecked_causes"] == []
    assert chains["vector_db_swap"] == [
        "vector_db_swap",
        "queue_backlog",
        "vram_pressure",
        "gpu_util_low",
    ]


def test_bench_accuracy_on_a_subset() -> None:
    args = ["accuracy", "--seeds", "1", "--dialects", "vllm", "--json"]
    res = runner.invoke(app, ["bench", *args, "--scenarios", "gpu_thermal_throttling"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert set(doc["scenarios"]) == {"gpu_thermal_throttling"}
    assert doc["false_root_rate"] is None  # no healthy window was run: undefined, not 0
