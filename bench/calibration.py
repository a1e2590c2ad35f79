"""Calibrate confidence: fit what a root's raw confidence has meant, and say how well it holds.

.venv/bin/python -m bench.calibration [--seeds N] [--first-seed S] [--dialects vllm]
[--scenarios a,b] [--perturbations all|none|magnitude,scrape-30s] [--rules r1,r2]
[--no-lab] [--no-cases] [--jobs 2] [--no-write]

Collects a (raw confidence, kind, right) pair for the first root of every diagnosis whose truth
is known (infersight.lab.evaluate.calibration): the scenario suite and its perturbations at
magnitudes of 0.5x or more (seeds S … S+N-1), the live lab's frozen bundles, the
leave-one-rule-out runs over the same seeds, bundles and the request-path frames of
tests/diagnose/. A healthy window with a root claimed is a wrong answer.

Fits one isotonic map per kind of root (named by a rule where the walk ended on its signals,
indirect: read from their effects or a limit beside a trigger, or a change no rule names) and
writes, unless --no-write:

  src/infersight/diagnose/calibration.json   the map the product applies to every root
  docs/img/reliability.svg                   the reliability diagram
  docs/benchmarks.md, section "calibration"  ECE before (raw) and after (out of sample, k-fold
                                             by seed, bundle and case file), wrong answers at
                                             0.8 or more, pairs per source, the bins

Bars (issue 37): ECE <= 0.08 and wrong answers at >= 0.8 <= 5% of all answers. A seed through
every dialect and perturbation is minutes of CPU; --jobs runs (scenario, seed) pairs in
parallel. Progress goes to stderr. How to read and refit: docs/calibration.md.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import asdict
from pathlib import Path

from bench import leave_one_out as loo_bench
from bench.report import write_section
from infersight.diagnose.calibrate import FILE, KINDS
from infersight.lab.evaluate import calibration as cal
from infersight.lab.evaluate.calibration_fit import CalibrationConfig, Scores, scores
from infersight.lab.evaluate.leave_one_out import Pair
from infersight.lab.evaluate.reliability import bins, svg, table
from infersight.lab.live.faults import FAULTS
from infersight.safe_write import write_text

COMMAND = ".venv/bin/python -m bench.calibration"
ROOT = Path(__file__).resolve().parents[1]
CALIBRATION_JSON = ROOT / "src" / "infersight" / "diagnose" / FILE
RELIABILITY_SVG = ROOT / "docs" / "img" / "reliability.svg"


def parser() -> argparse.ArgumentParser:
    ap = loo_bench.parser(__doc__)
    ap.add_argument(
        "--perturbations",
        default="all",
        help="perturbations (names or groups) whose cases join the fit: all (default: every "
        "one at a magnitude of 0.5x or more), none, or a comma-separated list",
    )
    ap.add_argument("--jobs", type=int, default=1, help="processes for the suite (default 1)")
    ap.add_argument("--folds", type=int, default=None, help="folds for the out-of-sample ECE")
    ap.add_argument(
        "--pairs-out", type=Path, help="also save the collected answers here (JSON), to refit later"
    )
    ap.add_argument(
        "--pairs-in",
        type=Path,
        help="fit on answers saved with --pairs-out instead of collecting them (runs nothing)",
    )
    ap.add_argument("--json-out", type=Path, default=CALIBRATION_JSON, help=argparse.SUPPRESS)
    ap.add_argument("--svg-out", type=Path, default=RELIABILITY_SVG, help=argparse.SUPPRESS)
    return ap


def command(args: argparse.Namespace) -> str:
    out = loo_bench.command(args).replace(loo_bench.COMMAND, COMMAND, 1)
    out += f" --perturbations {args.perturbations}" if args.perturbations != "all" else ""
    out += f" --folds {args.folds}" if args.folds else ""
    return out


def chosen(args: argparse.Namespace, cfg: CalibrationConfig) -> list[str]:
    wanted = loo_bench.listed(args.perturbations)
    return [] if wanted == ["none"] else cal.strong(wanted, cfg)


def collect(args: argparse.Namespace, cfg: CalibrationConfig) -> cal.Collected:
    def progress(what: str, frac: float) -> None:
        print(f"\r{frac:6.1%} {what[:60]:60s}", end="", file=sys.stderr, flush=True)

    out = cal.Collected()
    if args.seeds:
        print("the scenario suite and its perturbations", file=sys.stderr)
        out.pairs += cal.suite_pairs(
            args.seeds,
            args.first_seed,
            loo_bench.listed(args.dialects) or None,
            loo_bench.listed(args.scenarios) or None,
            chosen(args, cfg),
            args.jobs,
            progress,
        )
        print(file=sys.stderr)
    if not args.no_lab:
        print("the live lab's bundles", file=sys.stderr)
        expected = {name: f.expected for name, f in FAULTS.items()}
        lab = cal.lab_pairs(loo_bench.LAB_BUNDLES, expected)
        out.pairs += lab.pairs
        out.notes += lab.notes
    incidents = loo_bench.incidents(args)
    if incidents:
        print("leave one rule out", file=sys.stderr)
        loo = cal.loo_pairs(incidents, progress)
        out.pairs += loo.pairs
        out.notes += loo.notes
        print(file=sys.stderr)
    return out


def read_pairs(path: Path) -> tuple[cal.Collected, str]:
    """Answers saved with --pairs-out and the command that collected them; ValueError naming
    the file and what is wrong."""
    from infersight import userfile

    try:
        doc = json.loads(userfile.read_text(path, "--pairs-in"))
        pairs = [Pair(**p) for p in doc["pairs"]]
        notes = [str(n) for n in doc.get("notes", [])]
        cmd = str(doc["command"])
    except (json.JSONDecodeError, KeyError, TypeError) as exc:
        raise ValueError(f"--pairs-in {path}: not a file of saved answers ({exc})") from None
    bad = [
        p
        for p in pairs
        if p.source not in cal.SOURCES
        or p.kind not in KINDS
        or not isinstance(p.confidence, int | float)
        or not isinstance(p.right, bool)
    ]
    if bad:
        raise ValueError(f"--pairs-in {path}: an answer of unknown source, kind or type: {bad[0]}")
    return cal.Collected(pairs, notes), cmd


def save_pairs(path: Path, got: cal.Collected, cmd: str) -> None:
    doc = {"command": cmd, "pairs": [asdict(p) for p in got.pairs], "notes": got.notes}
    write_text(path, json.dumps(doc) + "\n")


def _pct(x: float) -> str:
    return f"{x:.1%}"


def section(
    pairs: list[Pair],
    counts: dict[str, int],
    doc: dict[str, object],
    s: Scores,
    cfg: CalibrationConfig,
) -> tuple[str, str]:
    """The section's body and the SVG."""
    right = [p.right for p in pairs]
    series = {"raw, all kinds": bins([p.confidence for p in pairs], right, cfg.bins)}
    for kind in KINDS:
        idx = [i for i, p in enumerate(pairs) if p.kind == kind]
        if idx:
            series[f"{kind}, calibrated"] = bins(
                s.calibrated[idx], [right[i] for i in idx], cfg.bins
            )
    kinds = doc["kinds"]
    assert isinstance(kinds, dict)
    fits = "; ".join(
        f"{k}: {v['pairs']} answers, {len(v['x'])} block{'s' if len(v['x']) != 1 else ''}"
        + ("" if v["fitted_on"] == k else " (too few of its own: fitted on all answers)")
        for k, v in kinds.items()
    )
    ece_ok = "met" if s.ece <= cfg.bar_ece else "not met"
    wrong_ok = "met" if s.wrong_high <= cfg.bar_wrong_high else "not met"
    sources = ", ".join(f"{n} {src}" for src, n in counts.items())
    body = "\n".join(
        [
            f"{len(pairs)} answers ({sources}); {sum(right)} right. Each is the first root of a "
            "diagnosis whose truth is known, with its raw confidence and kind "
            "(`infersight.lab.evaluate.calibration`; docs/calibration.md).",
            "",
            f"- Expected calibration error ({cfg.bins} equal-width bins, weighted by count): "
            f"raw **{s.ece_raw:.3f}**, calibrated out of sample ({cfg.folds}-fold by seed, "
            f"bundle and case file) **{s.ece:.3f}** (bar ≤ {cfg.bar_ece:g}: {ece_ok}).",
            f"- Wrong answers at a confidence of {cfg.high:g} or more, of all answers: raw "
            f"{_pct(s.wrong_high_raw)}, calibrated out of sample **{_pct(s.wrong_high)}** "
            f"(bar ≤ {cfg.bar_wrong_high:.0%}: {wrong_ok}).",
            f"- The fit shipped (`src/infersight/diagnose/{FILE}`, on every answer): {fits}.",
            "",
            "![Reliability diagram: stated confidence against the share right, per bin]"
            "(img/reliability.svg)",
            "",
            table(series),
        ]
    )
    title = f"Reliability: {len(pairs)} answers, ECE raw {s.ece_raw:.3f} → {s.ece:.3f}"
    return body, svg(series, title)


def main(argv: list[str] | None = None) -> int:
    ap = parser()
    args = ap.parse_args(argv)
    if args.seeds < 0 or args.first_seed < 0 or args.jobs < 1:
        ap.error("--seeds and --first-seed are 0 or more, --jobs 1 or more")
    if bad := loo_bench.unknown(args):
        ap.error(bad)
    if args.folds is not None and args.folds < 2:
        ap.error("--folds is 2 or more")
    cfg = CalibrationConfig(**({"folds": args.folds} if args.folds else {}))
    try:
        chosen(args, cfg)
    except ValueError as exc:  # an unknown perturbation
        ap.error(f"--perturbations: {exc}")
    t = time.perf_counter()
    cmd = command(args)
    if args.pairs_in is not None:
        try:
            got, cmd = read_pairs(args.pairs_in)
        except ValueError as exc:  # UserFileError too
            print(f"error: {exc}", file=sys.stderr)
            return 3
    else:
        got = collect(args, cfg)
        if args.pairs_out is not None:
            save_pairs(args.pairs_out, got, cmd)
    if not got.pairs:
        ap.error("no answer to fit on with these options")
    counts = got.counts()
    try:
        s = scores(got.pairs, cfg)
        doc = cal.document(got.pairs, counts, s, cmd, cfg)
        body, picture = section(got.pairs, counts, doc, s, cfg)
    except ValueError as exc:  # too few groups for an out-of-sample figure
        print(f"error: {exc}", file=sys.stderr)
        return 3
    wall = time.perf_counter() - t
    body += f"\n\nWall time: {wall:.0f} s."
    if got.notes:
        body += "\n\nLeft out:\n\n" + "\n".join(f"- {n}" for n in got.notes)
    print(body)
    if not args.no_write:
        write_text(args.json_out, json.dumps(doc, indent=1) + "\n")
        args.svg_out.parent.mkdir(parents=True, exist_ok=True)
        write_text(args.svg_out, picture + "\n")
        write_section("calibration", "Calibrated confidence", cmd, body, path=args.page)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
