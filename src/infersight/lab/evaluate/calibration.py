"""Pairs for calibrating confidence: every diagnosis whose truth is known, its first root's raw
confidence (before calibration), kind (`named`, `indirect`, `unnamed`) and whether it was right.

Sources, each pair keeping its own:

* `suite`: the scenario suite (`accuracy`'s run: the perturbation harness's baseline); right
  is the first root being a true root;
* `perturbation`: the suite under every perturbation whose fault is at least
  `min_magnitude` of the suite's, scored the same way;
* `lab`: the live lab's frozen bundles; right is the first root among the fault's expected
  answers (`lab.live.faults`);
* `loo`: leave-one-rule-out runs (`leave_one_out`): with the case's rule taken out, right is
  the first root at the rule's node;
* `case`: the request-path frames of `tests/diagnose/`, every rule in, right is the case's
  root first.

A healthy window (a healthy scenario, the lab's healthy bundle) where a root was claimed is a
wrong answer; one with no root states no confidence and makes no pair. A draw whose fault
never did its defining thing (`accuracy.Case.not_shown`) has no truth to be right about and is
left out; a case whose dialect lacks what the true root requires is kept (the user sees
whatever was named first, at its confidence). Each pair's group is what it shares data with:
a simulator seed (every scenario, dialect and perturbation of it), a lab bundle, a case file.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from infersight.bundle import read_bundle
from infersight.diagnose import diagnose
from infersight.diagnose.calibrate import VERSION, Calibration, Kind, kind_of, raw_of
from infersight.lab.evaluate import leave_one_out
from infersight.lab.evaluate.accuracy import Case
from infersight.lab.evaluate.calibration_fit import CalibrationConfig, Scores, fit
from infersight.lab.evaluate.leave_one_out import Pair
from infersight.lab.evaluate.perturbation import perturbations, run_perturbations, select

SOURCES = ("suite", "perturbation", "lab", "loo", "case")
Progress = Callable[[str, float], None]


@dataclass
class Collected:
    pairs: list[Pair] = field(default_factory=list)
    #: what was left out, one line each (a bundle with no known fault, a case with no truth)
    notes: list[str] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        """Pairs per source, in SOURCES' order (sources with none left out)."""
        out: dict[str, int] = {}
        for s in SOURCES:
            n = sum(1 for p in self.pairs if p.source == s)
            if n:
                out[s] = n
        return out


def case_pair(c: Case, source: str) -> Pair | None:
    """The pair of one scored suite case, or None (no root claimed, or no truth to judge)."""
    if c.not_shown or not c.predicted or not c.kind:
        return None
    right = bool(c.truth) and c.predicted[0] in c.truth
    kind: Kind = "named"
    if c.kind in ("indirect", "unnamed"):
        kind = "indirect" if c.kind == "indirect" else "unnamed"
    return Pair(c.raw_confidence, right, source, kind, f"seed {c.seed}")


def strong(wanted: Sequence[str], cfg: CalibrationConfig | None = None) -> list[str]:
    """The perturbations named in `wanted` (names or groups; "all": every one) whose fault is
    at least `min_magnitude` of the suite's, the suite's own run left out (it is `suite`)."""
    c = cfg or CalibrationConfig()
    chosen = perturbations() if "all" in wanted else select(wanted) if wanted else []
    return [
        p.name for p in chosen if p.name != "baseline" and p.variation.magnitude >= c.min_magnitude
    ]


def suite_pairs(
    seeds: int,
    first_seed: int = 0,
    dialects: Sequence[str] | None = None,
    scenarios: Sequence[str] | None = None,
    chosen: Sequence[str] = (),
    jobs: int = 1,
    progress: Progress | None = None,
) -> list[Pair]:
    """The suite (the perturbations' baseline, source `suite`) and the perturbations
    `chosen` (`strong`'s names), each simulated (scenario, seed) once for all of them."""
    report = run_perturbations(
        seeds=seeds,
        dialects=dialects,
        scenarios=scenarios,
        wanted=list(chosen) or ["baseline"],
        jobs=jobs,
        first_seed=first_seed,
        progress=progress,
    )
    out = []
    for name, rep in report.reports.items():
        source = "suite" if name == "baseline" else "perturbation"
        out += [p for case in rep.cases if (p := case_pair(case, source)) is not None]
    return out


def lab_pairs(folder: Path, expected: Mapping[str, Sequence[str]]) -> Collected:
    """The live lab's bundles: right is the first root among the fault's expected answers;
    the `healthy` bundle with a root is a wrong answer."""
    out = Collected()
    for path in sorted(folder.glob("*.tar.gz")):
        name = path.name.removesuffix(".tar.gz")
        if name != "healthy" and not expected.get(name):
            out.notes.append(f"lab bundle {name}: no known fault of that name, left out")
            continue
        dx = diagnose(dict(read_bundle(path).windows))
        if not dx.root_causes:
            continue
        first = dx.root_causes[0]
        right = name != "healthy" and first.hypothesis in expected[name]
        out.pairs.append(Pair(raw_of(first), right, "lab", kind_of(first), f"lab {name}"))
    return out


def loo_pairs(
    incidents: Sequence[leave_one_out.Incident], progress: Progress | None = None
) -> Collected:
    """Leave-one-rule-out runs: each case with its rule out (`loo`); the request-path frames
    with every rule in as well (`case`). The simulator's and the lab's diagnoses with every
    rule in are the suite's and the lab's own pairs, not counted twice."""
    run = leave_one_out.run(incidents, progress=progress)
    pairs = [p for p in run.pairs if p.source in ("loo", "case")]
    return Collected(pairs, list(run.skipped))


def document(
    pairs: Sequence[Pair],
    counts: Mapping[str, int],
    scores: Scores,
    command: str,
    cfg: CalibrationConfig,
    made: datetime | None = None,
) -> dict[str, Any]:
    """calibration.json's content: the fit on every pair, where they came from, its figures.
    Read back through the product's own parser before it is returned."""
    curves = fit(pairs, cfg)
    doc: dict[str, Any] = {
        "version": VERSION,
        "made": (made or datetime.now(UTC)).strftime("%Y-%m-%d"),
        "command": command,
        "pairs": dict(counts),
        "kinds": {k: c.model_dump(mode="json") for k, c in curves.items()},
        "fit": {
            "method": "isotonic regression (pool-adjacent-violators), one per kind",
            "min_block_weight": cfg.min_block_weight,
            "clip": [cfg.floor, cfg.ceiling],
            "interpolation": "linear between block centres, flat beyond the ends",
        },
        "figures": {
            "ece_raw": round(scores.ece_raw, 4),
            "ece_out_of_sample": round(scores.ece, 4),
            "folds": cfg.folds,
            "bins": cfg.bins,
            f"wrong_at_{cfg.high:g}_raw": round(scores.wrong_high_raw, 4),
            f"wrong_at_{cfg.high:g}_out_of_sample": round(scores.wrong_high, 4),
        },
    }
    Calibration.model_validate(doc)  # what the product will read: refused here, not there
    return doc
