"""The perturbation benchmark: which perturbations exist, what each exposes per dialect, how the
report reads, and one small run end to end through bench/perturbation.py."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from infersight.exporters import load_catalog
from infersight.lab.evaluate.accuracy import AccuracyReport, Case
from infersight.lab.evaluate.perturbation import (
    PerturbationConfig,
    PerturbationReport,
    perturbations,
    select,
)
from infersight.lab.evaluate.scenario_windows import readings
from infersight.lab.sim.knobs import Exposure


def test_every_perturbation_the_issue_asks_for() -> None:
    names = {p.name for p in perturbations()}
    assert names >= {
        "baseline", "magnitude-0.3", "magnitude-0.5", "magnitude-2", "magnitude-3",
        "onset-night", "onset-day", "instances-2", "instances-64", "scrape-15s", "scrape-30s",
        "scrape-60s", "noise-3", "without-dcgm", "without-node", "without-redis",
        "without-vector_db", "no-marker-vector_db", "renamed-markers",
    }  # fmt: skip
    assert perturbations()[0].name == "baseline"
    # a healthy run has no fault to scale: magnitude does not re-run it
    assert not any(p.healthy for p in perturbations() if p.group == "magnitude")


def test_select_by_name_or_group_keeps_the_baseline() -> None:
    got = [p.name for p in select(["scrape", "noise-3"])]
    assert got == ["baseline", "scrape-15s", "scrape-30s", "scrape-60s", "noise-3"]
    with pytest.raises(ValueError, match="unknown perturbation 'nope'"):
        select(["nope"])


def test_markers_are_the_catalogs_detect_names_the_dialect_emits() -> None:
    catalog, cfg = load_catalog(), PerturbationConfig()
    by = {p.name: p for p in perturbations(cfg)}
    qdrant = by["no-marker-vector_db"].exposure_for("triton", catalog, cfg)
    assert qdrant is not None
    assert set(qdrant.drop_metrics) <= set(catalog.families["qdrant"].detect)
    assert "rest_responses_total" in qdrant.drop_metrics
    milvus = by["no-marker-vector_db"].exposure_for("vllm", catalog, cfg)
    assert milvus is not None and "milvus_proxy_req_count" in milvus.drop_metrics
    # TGI's router has no Python runtime: nothing to leave out, no cases
    assert by["no-marker-python_runtime"].exposure_for("tgi", catalog, cfg) is None
    assert by["without-python_runtime"].exposure_for("triton", catalog, cfg) is None
    renamed = by["renamed-markers"].exposure_for("vllm", catalog, cfg)
    assert renamed is not None
    pairs = dict(renamed.rename_metrics)
    assert pairs["vllm:num_requests_running"] == "relabelled_vllm:num_requests_running"
    assert "DCGM_FI_DEV_GPU_UTIL" in pairs and "up" not in pairs
    assert by["scrape-30s"].exposure_for("vllm", catalog, cfg) == Exposure(scrape_s=30.0)


def test_held_readings_last_as_long_at_any_step() -> None:
    """3 readings at the suite's 60 s are 3 minutes: 12 readings of a 15 s run."""
    at = SimpleNamespace(frame=SimpleNamespace(step=15.0))
    assert readings(at, 3) == 12  # type: ignore[arg-type]
    at.frame.step = 60.0
    assert readings(at, 3) == 3 and readings(at, 1) == 1  # type: ignore[arg-type]
    at.frame.step = 120.0
    assert readings(at, 1) == 1  # type: ignore[arg-type]


def _case(scenario: str, truth: tuple[str, ...], predicted: tuple[str, ...]) -> Case:
    return Case(scenario, 0, "vllm", truth, predicted, 0.1)


def test_report_rows_differences_and_the_bar() -> None:
    ps = select(["magnitude-0.3", "magnitude-0.5", "instances-2"])
    hit, miss = _case("a", ("a",), ("a",)), _case("b", ("b",), ("x",))
    healthy_ok, healthy_bad = _case("h", (), ()), _case("h", (), ("y",))
    reports = {
        "baseline": AccuracyReport([hit, hit, healthy_ok]),
        "magnitude-0.3": AccuracyReport([miss, hit]),  # under the bar, but below its magnitude
        "magnitude-0.5": AccuracyReport([hit] * 9 + [miss]),  # 0.90: at the bar
        "instances-2": AccuracyReport([hit, miss, healthy_bad]),
    }
    rep = PerturbationReport(ps, reports)
    assert rep.below_bar() == ["instances-2"]
    md = rep.to_markdown()
    assert "| magnitude-0.5 | fault severity ×0.5" in md and "| 10 | 0.900 |" in md
    assert "| instances-2 | 2 instances (suite: 6) | 2 | 0.500 | 0.500 | -0.500 |" in md
    assert "1 of 1 (100.0%) |" in md and "| n/a |" in md
    assert "**not met** in instances-2 (0.500)" in md
    assert "- instances-2: b 0 vllm → x; healthy h 0 vllm → y" in md


@pytest.mark.sim
def test_bench_writes_its_section_with_the_command(tmp_path: Path) -> None:
    from bench.perturbation import main

    page = tmp_path / "benchmarks.md"
    args = "--seeds 1 --dialects vllm --scenarios slow_instance --perturbations scrape-60s"
    assert main([*args.split(), "--jobs", "1", "--page", str(page)]) == 0
    text = page.read_text()
    assert f"Reproduce: `.venv/bin/python -m bench.perturbation {args}`" in text
    assert "<!-- bench:perturbation -->" in text and "| scrape-60s |" in text
    assert "engine at" in text and "| baseline |" in text


@pytest.mark.sim
@pytest.mark.parametrize(
    ("scenario", "seed", "part"),
    [
        # a replica slower than its peers since 08:58 meets a burst at 11:24: its slowness
        # is dated by its first sign, not by the deviation from its own past the burst brought
        ("slow_instance", 5, "engine"),
        # three replicas out of rotation: their fall to nothing and their peers' doubling are
        # one move, dated 45 s apart by rates over one window at a 15 s scrape
        ("lb_instance_removed", 6, "service"),
        # bursts of the day's traffic meet a batch cap raised past the knee: the cap is the
        # fault, named before the burst, although a replica's TTFT rose beside the burst's work
        ("max_batch_too_large", 6, "engine"),
    ],
)
def test_scraped_every_15s_the_fault_is_still_named(scenario: str, seed: int, part: str) -> None:
    from infersight.diagnose import diagnose
    from infersight.lab.evaluate.scenario_windows import alert_time, windows_at
    from infersight.lab.sim import simulate

    res = simulate(scenario, 26, instances=6, seed=seed, step=15.0)
    store = res.raw("vllm", exposure=Exposure(scrape_s=15.0))
    at = alert_time(res)
    dx = diagnose(windows_at(res, "vllm", at, store, 15.0), at=at)
    first = dx.root_causes[0]
    assert first.hypothesis == scenario, [r.hypothesis for r in dx.root_causes]
    assert first.node.split(":")[0] == part and first.node.split(":")[1] in res.truth.instances


@pytest.mark.sim
def test_without_dcgm_a_pool_too_small_goes_before_the_queue_behind_it() -> None:
    """Two limits, one behind the other: the burst met the pool cut too small first, and the
    unbounded queue behind it only held what the pool could not take. With no card scraped,
    both hold; the pool is named first."""
    from infersight.diagnose import diagnose
    from infersight.lab.evaluate.scenario_windows import alert_time, windows_at
    from infersight.lab.sim import simulate

    res = simulate("threadpool_too_small", 26, instances=6, seed=5, step=60.0)
    store = res.raw("vllm", exposure=Exposure(without=("dcgm",)))
    at = alert_time(res)
    roots = [r.hypothesis for r in diagnose(windows_at(res, "vllm", at, store), at=at).root_causes]
    assert roots[:1] == ["threadpool_too_small"], roots
