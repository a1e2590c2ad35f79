"""Pairs for calibration from the labelled sources, and the document the product reads."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from infersight.diagnose.calibrate import Calibration, load
from infersight.lab.evaluate import calibration as cal
from infersight.lab.evaluate import leave_one_out
from infersight.lab.evaluate.accuracy import Case
from infersight.lab.evaluate.calibration_fit import CalibrationConfig, apply, fit, scores
from infersight.lab.evaluate.leave_one_out import Pair
from infersight.lab.live.faults import FAULTS

ROOT = Path(__file__).resolve().parents[3]
CASES = ROOT / "tests" / "diagnose" / "cases"


def _case(truth: tuple[str, ...], predicted: tuple[str, ...], **kw: object) -> Case:
    args: dict[str, object] = {"scenario": "s", "seed": 3, "dialect": "vllm", "seconds": 0.1}
    args.update(kw)
    return Case(truth=truth, predicted=predicted, **args)  # type: ignore[arg-type]


def test_a_suite_case_is_right_when_its_first_root_is_a_true_one() -> None:
    hit = cal.case_pair(_case(("a", "b"), ("b", "c"), raw_confidence=0.7, kind="named"), "suite")
    assert hit == Pair(0.7, True, "suite", "named", "seed 3")
    miss = cal.case_pair(_case(("a",), ("c", "a"), raw_confidence=0.8, kind="named"), "suite")
    assert miss is not None and not miss.right


def test_a_healthy_window_with_a_root_claimed_is_a_wrong_answer() -> None:
    claimed = cal.case_pair(_case((), ("x",), raw_confidence=0.6, kind="unnamed"), "suite")
    assert claimed == Pair(0.6, False, "suite", "unnamed", "seed 3")
    assert cal.case_pair(_case((), ()), "suite") is None  # no root: no confidence stated


def test_a_draw_that_never_showed_its_fault_has_no_truth_to_be_right_about() -> None:
    c = _case(("a",), ("b",), raw_confidence=0.6, kind="named", not_shown="no OOM")
    assert cal.case_pair(c, "perturbation") is None
    # a dialect that lacks what the true root requires: the first root named is still judged
    c = _case(("a",), ("b",), raw_confidence=0.6, kind="named", missing=("x",))
    assert cal.case_pair(c, "suite") == Pair(0.6, False, "suite", "named", "seed 3")


def test_perturbations_under_half_the_fault_are_left_out() -> None:
    assert cal.strong(["magnitude"]) == ["magnitude-0.5", "magnitude-2", "magnitude-3"]
    assert "magnitude-0.3" not in cal.strong(["all"]) and "baseline" not in cal.strong(["all"])
    assert cal.strong([]) == []
    with pytest.raises(ValueError, match="unknown perturbation"):
        cal.strong(["magnitude-7"])


def test_counts_list_only_the_sources_with_answers_in_order() -> None:
    got = cal.Collected([Pair(0.5, True, "loo"), Pair(0.5, True, "suite"), Pair(0.2, False, "loo")])
    assert list(got.counts().items()) == [("suite", 1), ("loo", 2)]


def test_the_document_is_what_the_product_reads_and_maps_as_the_fit_does() -> None:
    rng = np.random.default_rng(0)
    raw = rng.uniform(0.3, 1.0, 400)
    right = rng.uniform(0, 1, 400) < raw - 0.2
    pairs = [
        Pair(float(c), bool(r), "suite", "named" if i % 4 else "unnamed", f"seed {i % 5}")
        for i, (c, r) in enumerate(zip(raw, right, strict=True))
    ]
    cfg = CalibrationConfig()
    doc = cal.document(
        pairs, {"suite": 400}, scores(pairs, cfg), "cmd", cfg, datetime(2026, 12, 6, tzinfo=UTC)
    )
    read = Calibration.model_validate(doc)
    assert read.made == "2026-12-06" and read.command == "cmd" and read.pairs == {"suite": 400}
    mapped = [read.map(p.confidence, p.kind) for p in pairs]
    assert mapped == pytest.approx(list(apply(fit(pairs, cfg), pairs)), abs=1e-3)
    assert doc["figures"]["ece_out_of_sample"] >= 0


@pytest.mark.slow
def test_lab_bundles_and_case_frames_give_pairs_of_their_own_groups() -> None:
    expected = {name: f.expected for name, f in FAULTS.items()}
    lab = cal.lab_pairs(ROOT / "tests" / "diagnose" / "lab_incidents", expected)
    assert lab.pairs and {p.source for p in lab.pairs} == {"lab"}
    groups = [p.group for p in lab.pairs]
    assert all(g.startswith("lab ") for g in groups) and len(set(groups)) == len(groups)
    incidents = leave_one_out.gather(case_folders=[CASES], rules=["gpu_thermal_throttling"])
    loo = cal.loo_pairs(incidents)
    assert {p.source for p in loo.pairs} == {"loo", "case"}
    assert {p.group for p in loo.pairs} == {"case gpu_thermal_throttling"}


def test_bench_refuses_unknown_perturbations_and_too_few_folds(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from bench.calibration import main

    for bad, why in (
        (["--perturbations", "magnitude-7"], "unknown perturbation 'magnitude-7'"),
        (["--folds", "1"], "--folds is 2 or more"),
        (["--jobs", "0"], "--jobs 1 or more"),
        (["--rules", "nope"], "--rules: 'nope' is not one of"),
    ):
        with pytest.raises(SystemExit) as exit_:
            main(bad)
        assert exit_.value.code == 2 and why in capsys.readouterr().err


def test_bench_refuses_a_file_that_holds_no_saved_answers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from bench.calibration import main

    saved = tmp_path / "pairs.json"
    saved.write_text('{"pairs": [{"confidence": 0.5}]}')
    assert main(["--pairs-in", str(saved), "--no-write"]) == 3
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not a file of saved answers" in err


@pytest.mark.sim
def test_bench_fits_writes_the_map_the_diagram_and_its_section(tmp_path: Path) -> None:
    from bench.calibration import main

    names = {"page": "b.md", "json-out": "c.json", "svg-out": "img/r.svg", "pairs-out": "p.json"}
    out = {k: tmp_path / f for k, f in names.items()}
    rule = "gpu_thermal_throttling"
    args = f"--seeds 1 --dialects vllm --scenarios {rule},healthy_spiky --rules {rule}"
    args += " --perturbations none"
    files = [x for k, p in out.items() for x in (f"--{k}", str(p))]
    assert main([*args.split(), *files]) == 0
    made = load(out["json-out"])
    assert made.command == f".venv/bin/python -m bench.calibration {args}"
    assert set(made.pairs) <= set(cal.SOURCES) and {"lab", "loo", "case"} <= set(made.pairs)
    text = out["page"].read_text()
    assert f"Reproduce: `{made.command}`" in text and "<!-- bench:calibration -->" in text
    assert "Expected calibration error" in text and "| 0.9–1.0 |" in text
    assert out["svg-out"].read_text().startswith("<svg")
    # a refit from the saved answers runs nothing and makes the same map
    again = tmp_path / "again.json"
    refit = ["--pairs-in", str(out["pairs-out"]), "--json-out", str(again)]
    refit += ["--page", str(out["page"]), "--svg-out", str(out["svg-out"])]
    assert main(refit) == 0
    assert load(again).kinds == made.kinds and load(again).command == made.command
