"""The CLI end to end against a real Prometheus holding backfilled history."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from infersight.bundle import read_bundle
from infersight.cli import app
from infersight.exporters import load_catalog
from infersight.lab.live.servers import LocalPrometheus, free_port
from infersight.sources.local import canonical_frame
from infersight.sources.openmetrics_writer import write_openmetrics
from infersight.sources.raw import RawStore, labels_of

pytestmark = pytest.mark.server
runner = CliRunner()
STEP = 15.0
END = 1_764_000_000.0  # a fixed past instant on the 15 s grid
START = END - 3 * 3600


def _history() -> RawStore:
    """Three GPU nodes, three hours: vLLM queue + request counter, DCGM util, node CPU."""
    rng = np.random.default_rng(7)
    ts = np.arange(START, END + 1, STEP)
    store = RawStore()
    for k in range(3):
        host = f"node-{k}"
        queue = rng.integers(0, 5, ts.size).astype(float) + (10.0 if k == 2 else 0.0)
        store.add_many(
            "vllm:num_requests_waiting",
            labels_of({"instance": f"{host}:8000", "job": "vllm", "model_name": "m"}),
            ts,
            queue,
        )
        served = np.cumsum(np.full(ts.size, 4.0 * STEP))  # 4 requests/s
        store.add_many(
            "vllm:request_success_total",
            labels_of({"instance": f"{host}:8000", "job": "vllm", "finished_reason": "stop"}),
            ts,
            served,
        )
        store.add_many(
            "DCGM_FI_DEV_GPU_UTIL",
            labels_of({"instance": f"{host}:9400", "Hostname": host, "gpu": "0"}),
            ts,
            np.full(ts.size, 40.0 + 10 * k),
        )
    return store


@pytest.fixture
def history_server(
    tmp_path: Path, prometheus_with_backfill: Callable[[Sequence[Path]], LocalPrometheus]
) -> tuple[str, RawStore, Path]:
    store = _history()
    om = tmp_path / "history.om"
    write_openmetrics(
        store,
        om,
        types={
            "vllm:num_requests_waiting": "gauge",
            "vllm:request_success_total": "counter",
            "DCGM_FI_DEV_GPU_UTIL": "gauge",
        },
    )
    return prometheus_with_backfill([om]).url, store, om


def _json(args: list[str]) -> dict[str, object]:
    res = runner.invoke(app, args)
    assert res.exit_code == 0, res.output
    data: dict[str, object] = json.loads(res.stdout)
    return data


def test_probe_pull_inspect_agree_with_the_local_mapping(
    history_server: tuple[str, RawStore, Path], tmp_path: Path
) -> None:
    url, store, _ = history_server
    probe = _json(["probe", "-p", url, "--json"])
    assert {"vllm", "dcgm"} <= set(probe["families"])  # type: ignore[arg-type]
    by_sig = {s["signal"]: s for s in probe["signals"]}  # type: ignore[union-attr,index]
    assert by_sig["service.queue_length"]["available"]
    kv = by_sig["inference.kv_cache_usage"]
    assert not kv["available"] and "vllm:kv_cache_usage_perc" in kv["reason"]

    out = tmp_path / "incident.tar.gz"
    at = str(END - 600)
    pulled = _json(
        [
            "pull",
            "-p",
            url,
            "--window",
            "1h",
            "--at",
            at,
            "--baselines",
            "1h",
            "-o",
            str(out),
            "--json",
        ]
    )
    assert set(pulled["windows"]) == {"incident", "baseline-1h"}  # type: ignore[arg-type]

    info = _json(["bundle", "inspect", str(out), "--json"])
    assert info["instance_count"] == 3
    assert {w["name"] for w in info["windows"]} == {"incident", "baseline-1h"}  # type: ignore[union-attr,index]

    frame = read_bundle(out).frame
    local = canonical_frame(store, load_catalog(), frame.start, frame.end, STEP).frame
    for signal in ("service.queue_length", "inference.gpu_util", "service.request_rate"):
        live, offline = frame.get(signal), local.get(signal)
        assert live is not None and offline is not None, signal
        assert live.instances == offline.instances == ("node-0", "node-1", "node-2")
        np.testing.assert_allclose(live.values, offline.values, rtol=1e-9, err_msg=signal)
    gpu = frame.get("inference.gpu_util")
    assert gpu is not None
    assert gpu.values[:, -1].tolist() == pytest.approx([0.4, 0.5, 0.6])  # percent → ratio


def test_import_of_the_same_history_gives_the_same_signals(
    history_server: tuple[str, RawStore, Path], tmp_path: Path
) -> None:
    _, _store, om = history_server
    out = tmp_path / "imported"
    res = _json(["bundle", "import", str(om), "-o", str(out), "--json"])
    assert "service.queue_length" in res["signals"]  # type: ignore[operator]
    frame = read_bundle(out).frame
    q = frame.get("service.queue_length")
    assert q is not None and q.instances == ("node-0", "node-1", "node-2")
    assert np.nanmedian(q.values[2]) > np.nanmedian(q.values[0]) + 5
    # the manifest names the expression evaluated over the files, and its family (issue 39)
    fed = read_bundle(out).manifest.queries["incident"].signals["service.queue_length"]
    assert [(f.family, "vllm:num_requests_waiting" in f.expr) for f in fed] == [("vllm", True)]


def test_pull_from_a_closed_port_is_one_line() -> None:
    res = subprocess.run(
        [
            sys.executable,
            "-c",
            "from infersight.cli import main; main()",
            "pull",
            "-p",
            f"http://127.0.0.1:{free_port()}",
            "-o",
            "/tmp/never-written.tar.gz",
            "--timeout",
            "2",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert res.returncode == 3  # a server error, not findings
    assert "Traceback" not in res.stderr
    assert res.stderr.strip().count("\n") == 0, res.stderr
    assert not Path("/tmp/never-written.tar.gz").exists()
