"""Round trip: emit a dialect → evaluate the catalog locally → agree with the model's frame."""

from __future__ import annotations

import json
import tarfile
from functools import cache
from pathlib import Path

import numpy as np
import pytest

from infersight.exporters import load_catalog
from infersight.lab.sim import SimResult, simulate
from infersight.lab.sim.dialects import DIALECTS
from infersight.lab.sim.outputs import run_cli
from infersight.sources.local import canonical_frame

#: relative tolerance by kind; histogram quantiles are approximate (bucket interpolation)
QUANTILE = ("_p99", "_p50")


@cache
def _res() -> SimResult:
    return simulate("incident_0217", hours=3, instances=3, seed=5, step=15.0)


def _tolerance(signal: str, dialect: str) -> float:
    if signal.endswith(QUANTILE):
        return 0.6  # vLLM's smallest request bucket is 0.3 s: see the floor below
    if signal.endswith("_avg") or "ratio" in signal or signal.endswith("_rate"):
        return 0.1
    return 0.03


@pytest.mark.sim
@pytest.mark.parametrize("dialect", DIALECTS)
def test_round_trip(dialect: str) -> None:
    res = _res()
    store = res.raw(dialect)
    names = {s.name for s in store}
    assert "up" in names
    got = canonical_frame(
        store, load_catalog(), res.frame.start, res.frame.end, res.frame.step, window="1m"
    ).frame
    compared = 0
    for sig in got.signals:
        want = res.frame.get(sig)
        if want is None:
            continue
        for inst in got.series[sig].instances:
            a, b = got.series[sig].row(inst), want.row(inst)
            if a is None or b is None:
                continue
            ok = np.isfinite(a) & np.isfinite(b)
            ok[:8] = False  # the first window has no rate yet
            if ok.sum() < 50:
                continue
            err = np.abs(a[ok] - b[ok])
            floor = 1e-3
            if sig.endswith(QUANTILE):  # a quantile can be off by its bucket's width
                floor = 0.5 if dialect == "vllm" else 0.02
            scale = np.maximum(np.abs(b[ok]), floor)
            assert np.median(err / scale) <= _tolerance(sig, dialect), (sig, inst)
            compared += 1
    assert compared >= 40


@pytest.mark.sim
def test_labels_like_real_exporters() -> None:
    store = _res().raw("vllm")
    dcgm = store.series("DCGM_FI_DEV_GPU_UTIL")[0].label_map
    assert dcgm["instance"].endswith(":9400") and dcgm["Hostname"] == dcgm["instance"][:-5]
    assert store.series("vllm:num_requests_waiting")[0].label_map["instance"].endswith(":8000")
    assert any(s.label_map["instance"] == "vectordb-0:9091" for s in store.series("up"))
    assert any(s.label_map["instance"] == "cache-0:9121" for s in store.series("up"))


@pytest.mark.sim
def test_run_cli_bundle_and_openmetrics(tmp_path: Path) -> None:
    seen: list[str] = []
    out = tmp_path / "b.tar.gz"
    summary = run_cli("vector_db_swap", 1, 2, 3, "canonical", out, lambda s, _f: seen.append(s))
    assert summary["signals"] > 50 and "done" in seen
    with tarfile.open(out) as tar:
        member = next(m for m in tar.getmembers() if m.name.endswith("truth.json"))
        extracted = tar.extractfile(member)
        assert extracted is not None
        truth = json.loads(extracted.read())
    assert truth["roots"] == ["vector_db_swap"] and truth["seed"] == 3
    om = tmp_path / "m.om"
    summary = run_cli("healthy_flat", 0.5, 2, 1, "tgi", om)
    text = om.read_text()
    assert summary["samples"] > 1000 and text.rstrip().endswith("# EOF")
    assert "tgi_request_duration_bucket" in text


@pytest.mark.sim
def test_sim_bundle_is_shaped_like_a_pull(tmp_path: Path) -> None:
    """Incident window ending half an hour after the onset, plus the baselines the run covers,
    in a dialect mapped back through the catalog."""
    from infersight.bundle import read_bundle

    out = tmp_path / "swap"
    run_cli("vector_db_swap", 2, 3, 5, "vllm", out, history_h=25)
    b = read_bundle(out)
    assert set(b.windows) == {"incident", "baseline-1h", "baseline-1d"}
    truth = json.loads(b.read_artifact("truth.json"))
    assert b.frame.end == pytest.approx(truth["onset"] + 1800, abs=15)
    assert b.frame.n == 241 and b.manifest.source["dialect"] == "vllm"
    assert truth["onset"] - b.manifest.windows["baseline-1d"].start >= 86400
    assert "dependency.vector_query_p99" in b.frame.signals
    with pytest.raises(FileExistsError):
        run_cli("vector_db_swap", 1, 2, 3, "vllm", out)
    with pytest.raises(ValueError, match="dialect"):
        run_cli("vector_db_swap", 1, 2, 3, "canonical", tmp_path / "x.om")


def test_scenario_refused_in_a_dialect_where_its_cause_cannot_happen(tmp_path: Path) -> None:
    from infersight.lab.sim.scenarios import NotApplicableError, get_scenario

    out = tmp_path / "gc.tar.gz"
    with pytest.raises(NotApplicableError, match=r"Rust.*choose --dialect native or vllm"):
        run_cli("gc_pauses", 1, 2, 0, "tgi", out)
    assert not out.exists()
    sc = get_scenario("threadpool_too_large")
    assert sc.applies_to("native") and sc.applies_to("canonical")
    assert not any(sc.applies_to(d) for d in ("vllm", "tgi", "triton"))
    assert all(get_scenario("vector_db_swap").applies_to(d) for d in DIALECTS)


@pytest.mark.slow
def test_lab_sim_cli_says_why_in_one_line(tmp_path: Path) -> None:
    import subprocess
    import sys

    out = tmp_path / "x.om"
    cmd = ["lab", "sim", "-s", "gc_pauses", "-d", "triton", "-o", str(out)]
    res = subprocess.run(
        [sys.executable, "-c", "from infersight.cli import main; main()", *cmd],
        capture_output=True,
        text=True,
    )
    assert res.returncode == 2, res.stderr
    assert res.stderr.strip().count("\n") == 0
    assert "does not apply to the triton dialect" in res.stderr
    assert not out.exists()
