"""The scenario suite under perturbations: AC@1 and AC@3 per perturbation.

.venv/bin/python -m bench.perturbation [--quick] [--seeds N] [--first-seed S]
[--scenarios a,b] [--perturbations magnitude,scrape-30s] [--dialects vllm] [--jobs 2]
writes the "perturbation" section of docs/benchmarks.md (--no-write: print only).

--quick is one seed, the vllm dialect and every perturbation (about 6 minutes on 2 cores); the
full run is every dialect and 5 seeds. Scoring is the accuracy benchmark's own
(infersight.lab.evaluate.accuracy); see infersight.lab.evaluate.perturbation for the knobs.
The engine under test is whatever the working tree holds: the section names its commit and
whether the engine's files had uncommitted changes.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

from bench.report import BENCHMARKS_MD, write_section
from infersight.lab.evaluate.perturbation import run_perturbations

COMMAND = ".venv/bin/python -m bench.perturbation"
ROOT = Path(__file__).resolve().parents[1]
#: the files whose state decides the diagnosis
ENGINE_PATHS = ("src/infersight/diagnose", "src/infersight/detect", "src/infersight/catalog")


def engine_state() -> str:
    """The commit the engine was run at, and which of its folders had uncommitted changes."""
    try:
        sha = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--", *ENGINE_PATHS],
            cwd=ROOT,
            capture_output=True,
            text=True,
        ).stdout.splitlines()
    except OSError:
        return "engine at an unknown commit (no git)"
    if not sha:
        return "engine at an unknown commit"
    if not dirty:
        return f"engine at commit `{sha}`"
    folders = sorted({line[3:].split("/")[2] for line in dirty if line[3:].count("/") >= 2})
    return (
        f"engine at commit `{sha}` plus uncommitted changes in "
        f"{', '.join(f'`{f}/`' for f in folders)} ({len(dirty)} files)"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true", help="1 seed, vllm, every perturbation")
    ap.add_argument("--seeds", type=int, default=5, help="seeds per scenario (default %(default)s)")
    ap.add_argument("--first-seed", type=int, default=0, help="first seed (default %(default)s)")
    ap.add_argument("--scenarios", default="", help="comma-separated subset (default: all)")
    ap.add_argument(
        "--perturbations", default="", help="comma-separated names or groups (default: all)"
    )
    ap.add_argument("--dialects", default="", help="comma-separated (default: every dialect)")
    ap.add_argument("--jobs", type=int, default=2, help="processes, one (scenario, seed) each")
    ap.add_argument("--no-write", action="store_true", help="print only, write no section")
    ap.add_argument("--page", type=Path, default=BENCHMARKS_MD, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)

    def listed(text: str) -> list[str]:
        return [x.strip() for x in text.split(",") if x.strip()]

    seeds = 1 if args.quick else args.seeds
    dialects = ["vllm"] if args.quick else listed(args.dialects) or None
    scenarios, wanted = listed(args.scenarios) or None, listed(args.perturbations)

    def progress(what: str, frac: float) -> None:
        print(f"\r{frac:6.1%} {what:40s}", end="", file=sys.stderr, flush=True)

    engine = engine_state()  # before: the rules are read as the run goes
    t = time.perf_counter()
    report = run_perturbations(
        seeds=seeds,
        dialects=dialects,
        scenarios=scenarios,
        wanted=wanted,
        jobs=args.jobs,
        first_seed=args.first_seed,
        progress=progress,
    )
    wall = time.perf_counter() - t
    print(file=sys.stderr)
    after = engine_state()
    if after != engine:
        engine += (
            f"; **the engine's files changed during the run** (at its end: {after}), "
            "so its cases may mix the two"
        )
    command = COMMAND + (" --quick" if args.quick else f" --seeds {seeds}")
    if args.first_seed:
        command += f" --first-seed {args.first_seed}"
    if dialects and not args.quick:
        command += f" --dialects {','.join(dialects)}"
    if scenarios:
        command += f" --scenarios {','.join(scenarios)}"
    if wanted:
        command += f" --perturbations {','.join(wanted)}"
    ds = dialects or ["every dialect"]
    kind = "**Quick run**" if args.quick else "**Run**"
    body = (
        f"{kind}: seeds {args.first_seed}–{args.first_seed + seeds - 1}, {', '.join(ds)}, "
        f"{engine}. Each perturbation moves one knob of the accuracy suite's run "
        "(26 h, 6 instances, 60 s) and is scored by the accuracy harness itself: cases are "
        "the observable incident cases (left out as there: a cause the dialect cannot hold, "
        "a true root whose required signals are missing — *not observable* — and a draw "
        "whose fault never did its defining thing — *not shown*). What magnitude scales per "
        "fault: `src/infersight/lab/sim/faults.py`; every knob: `docs/simulator.md`.\n\n"
        f"{report.to_markdown()}\n\nWall time: {wall:.0f} s ({args.jobs} processes).\n"
    )
    print(body)
    if not args.no_write:
        write_section(
            "perturbation", "Diagnosis under perturbations", command, body, path=args.page
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
