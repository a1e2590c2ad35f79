"""Physical bounds in every dialect, restarts seen the way exporters show them, a fleet that is
not a set of clones."""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

import numpy as np
import pytest

from infersight.exporters import load_catalog
from infersight.frame import MetricFrame
from infersight.lab.sim import SimResult, list_scenarios, simulate
from infersight.lab.sim.dialects import DIALECTS
from infersight.signals import all_signals
from infersight.sources.local import LocalResult, canonical_frame

pytestmark = pytest.mark.sim

Run = Callable[..., SimResult]
SOURCES = ("model", *DIALECTS)
NON_NEGATIVE = {"count", "per_s", "s", "bytes", "cores", "W", "code"}
#: the engine's own target per dialect: job, port, a request counter it always exposes
ENGINE = {
    "vllm": ("vllm", 8000, "vllm:e2e_request_latency_seconds_count"),
    "triton": ("triton", 8002, "nv_inference_count"),
    "tgi": ("tgi", 8080, "tgi_request_duration_count"),
    "native": ("infersight", 8000, "infersight_request_duration_seconds_count"),
}
PYTHON_RUNTIME = {
    "python_info",
    "python_gc_collections_total",
    "process_start_time_seconds",
    "process_resident_memory_bytes",
    "process_cpu_seconds_total",
}


@cache
def _short(scenario: str) -> SimResult:
    return simulate(scenario, hours=2, instances=3, seed=1, step=60.0, history_h=0)


_LOCAL: dict[tuple[int, str], tuple[SimResult, LocalResult]] = {}


def _local(res: SimResult, dialect: str) -> LocalResult:
    """The dialect mapped back through the catalog (memoised: runs are cached per session)."""
    key = (id(res), dialect)
    if key not in _LOCAL:
        f = res.frame
        got = canonical_frame(res.raw(dialect), load_catalog(), f.start, f.end, f.step, "5m")
        _LOCAL[key] = (res, got)
    return _LOCAL[key][1]


def _frame(res: SimResult, source: str) -> MetricFrame:
    return res.frame if source == "model" else _local(res, source).frame


def _violations(frame: MetricFrame, skip: int) -> list[str]:
    known = all_signals()
    out = []
    for sig in frame.signals:
        unit = known[sig].unit
        v = frame.series[sig].values[:, skip:]
        fin = v[np.isfinite(v)]
        if v.size and fin.size < 0.5 * v.size:
            out.append(f"{sig}: {1 - fin.size / v.size:.0%} NaN")
        if fin.size == 0:
            continue
        lo, hi = float(fin.min()), float(fin.max())
        if unit == "ratio" and (lo < -0.01 or hi > 1.01):
            out.append(f"{sig}: ratio in [{lo:.3g}, {hi:.3g}]")
        elif unit in NON_NEGATIVE and lo < -1e-9:
            out.append(f"{sig}: {unit} down to {lo:.3g}")
        elif unit == "celsius" and (lo < 5.0 or hi > 110.0):
            out.append(f"{sig}: °C in [{lo:.3g}, {hi:.3g}]")
        elif unit == "MHz" and lo <= 0.0:
            out.append(f"{sig}: MHz down to {lo:.3g}")
    return out


@pytest.mark.parametrize("source", SOURCES)
def test_every_scenario_is_physical_in_every_dialect(source: str) -> None:
    bad = {}
    for s in list_scenarios():
        res = _short(s["name"])
        found = _violations(_frame(res, source), skip=6)  # the first 5 m have no rate yet
        if found:
            bad[s["name"]] = found
    assert not bad


@pytest.mark.parametrize(
    "scenario", ["vram_oom_cascade", "threadpool_too_large", "max_batch_too_large"]
)
@pytest.mark.parametrize("source", SOURCES)
def test_oom_days_are_physical(run: Run, scenario: str, source: str) -> None:
    """Whole days with OOMs and restarts: KV use stays a fraction, no ratio passes 1."""
    res = run(scenario)
    assert res.trace.inst["restarts"][-1].sum() > 0
    assert not _violations(_frame(res, source), skip=6)


def _engine_series(
    res: SimResult, dialect: str, name: str, node: int
) -> tuple[np.ndarray, np.ndarray]:
    job, port, _ = ENGINE[dialect]
    store = res.raw(dialect)
    for s in store.series(name):
        lab = s.label_map
        if lab["job"] == job and lab["instance"] == f"node-{node}:{port}":
            return np.asarray(s.ts), np.asarray(s.values)
    raise AssertionError((dialect, name, node))


@pytest.mark.parametrize("dialect", DIALECTS)
def test_restarts_show_as_exporters_show_them(run: Run, dialect: str) -> None:
    """OOM → restart → cold start: `up` 0 while down, counters back at zero, and where the
    process exposes it a new process_start_time_seconds (→ service.restarts)."""
    res = run("vram_oom_cascade")
    restarts = res.trace.inst["restarts"][-1]
    node = int(np.argmax(restarts))
    assert restarts[node] >= 1
    _, _, counter = ENGINE[dialect]
    ts, up = _engine_series(res, dialect, "up", node)
    assert up.min() == 0 and up.max() == 1
    down = ts[up == 0]
    cts, cv = _engine_series(res, dialect, counter, node)
    assert not np.isin(cts, down).any()  # a dead process answers no scrape
    assert (np.diff(cv) < 0).sum() >= 1  # the new process counts from zero
    names = {s.name for s in res.raw(dialect)}
    if dialect in ("vllm", "native"):
        assert names >= PYTHON_RUNTIME
        _, start = _engine_series(res, dialect, "process_start_time_seconds", node)
        assert np.unique(start).size == restarts[node] + 1
        assert np.all(start < res.times[-1])
        got = _local(res, dialect).frame.get("service.restarts")
        assert got is not None and np.nanmax(got.values) >= 1
    else:  # Rust (TGI's router) and C++ (Triton) have no Python runtime to report
        assert not names & {"python_info", "python_gc_collections_total"}
    if dialect == "triton":
        _, load = _engine_series(res, dialect, "nv_model_load_duration_secs", node)
        assert np.unique(load).size == restarts[node] + 1


#: names only the live lab's own vector service process exports (its page faults); the
#: simulator's native stack has no such process: its vector database is Qdrant
VECTOR_PROCESS_ONLY = {"dependency.vector_major_faults_rate"}


def test_native_emits_every_name_the_catalog_reads(run: Run) -> None:
    res = run("vram_oom_cascade")
    local = _local(res, "native")
    family = load_catalog().families["infersight"]
    for sig in family.signals:
        if sig in VECTOR_PROCESS_ONLY:  # the simulated stack runs Qdrant, whose exporter has it
            assert local.sources.get(sig) == "qdrant", (sig, local.missing.get(sig))
            continue
        assert "infersight" in local.sources.get(sig, ""), (sig, local.missing.get(sig))
    oom = local.frame.get("inference.oom_rate")
    assert oom is not None and np.nanmax(oom.values) > 0


def test_healthy_fleet_has_spread_but_no_outlier() -> None:
    res = simulate("healthy_diurnal", hours=6, instances=8, seed=3, step=60.0)
    f = res.frame
    for sig in ("service.e2e_latency_p50", "service.request_rate", "inference.forward_time_avg"):
        v = f.series[sig].values[:, 30:]
        med = np.nanmedian(v, axis=1)
        spread = np.std(med) / np.mean(med)
        assert 0.005 < spread < 0.08, (sig, spread)
        assert np.all(np.abs(med / np.median(med) - 1.0) < 0.15), sig
        # instances differ step by step too, not only by a constant factor
        assert np.mean(np.ptp(v, axis=0) > 0) > 0.9, sig


def test_same_seed_same_raw_samples() -> None:
    a = simulate("vram_leak", hours=2, instances=3, seed=4, step=60.0).raw("native")
    b = simulate("vram_leak", hours=2, instances=3, seed=4, step=60.0).raw("native")
    sa = {(s.name, s.labels): np.asarray(s.values) for s in a}
    sb = {(s.name, s.labels): np.asarray(s.values) for s in b}
    assert sa.keys() == sb.keys()
    for k, v in sa.items():
        np.testing.assert_array_equal(v, sb[k])
