"""Leave one rule out: how the engine answers an incident no rule was written for.

.venv/bin/python -m bench.leave_one_out [--seeds N] [--first-seed S] [--dialects vllm,triton]
[--scenarios a,b] [--rules r1,r2] [--no-lab] [--no-cases] [--no-write]
writes the "leave_one_out" section of docs/benchmarks.md.

For each cause rule R with cases, R is taken out of the knowledge base and every case whose
truth is R is diagnosed again: the simulator's scenarios (seeds S … S+N-1, each through every
dialect that can hold it), the live lab's frozen bundles (tests/diagnose/lab_incidents) and
the request-path frames (tests/diagnose/cases, tests/diagnose/path_cases). Per case:

  right node       a root sits at one of R's parts on the instances the fault touched;
  signal in three  that root is a change no rule names, and one of R's signals is among its
                   first three pieces of evidence;
  other first      another rule (not a true root) is named first at 50% or more.

Bars (issue 37): right node ≥ 90%, signal in three ≥ 80%, other first ≤ 10%. Each case is
diagnosed twice (every rule in, then R out); a simulator seed is about 90 cases through four
dialects, a few minutes on one core. Progress goes to stderr; --no-write prints the section.
See infersight.lab.evaluate.leave_one_out for the scoring.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from bench.report import BENCHMARKS_MD, write_section
from infersight.diagnose.kb import load_kb
from infersight.lab.evaluate import leave_one_out
from infersight.lab.live.faults import FAULTS
from infersight.lab.sim import list_scenarios
from infersight.lab.sim.dialects import DIALECTS

COMMAND = ".venv/bin/python -m bench.leave_one_out"
ROOT = Path(__file__).resolve().parents[1]
LAB_BUNDLES = ROOT / "tests" / "diagnose" / "lab_incidents"
CASE_FOLDERS = (ROOT / "tests" / "diagnose" / "cases", ROOT / "tests" / "diagnose" / "path_cases")


def listed(text: str) -> list[str]:
    return [x.strip() for x in text.split(",") if x.strip()]


def parser(doc: str | None = __doc__) -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        description=doc, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        "--seeds", type=int, default=5, help="simulator seeds per scenario (0: none; default 5)"
    )
    ap.add_argument("--first-seed", type=int, default=0, help="first seed (default 0)")
    ap.add_argument("--dialects", default="", help="comma-separated (default: every dialect)")
    ap.add_argument("--scenarios", default="", help="comma-separated subset (default: all)")
    ap.add_argument("--rules", default="", help="comma-separated cause rules (default: all)")
    ap.add_argument("--no-lab", action="store_true", help="leave out the live lab's bundles")
    ap.add_argument("--no-cases", action="store_true", help="leave out the request-path frames")
    ap.add_argument("--no-write", action="store_true", help="print only, write nothing")
    ap.add_argument("--page", type=Path, default=BENCHMARKS_MD, help=argparse.SUPPRESS)
    return ap


def command(args: argparse.Namespace) -> str:
    """The command line that reproduces this run (the options that differ from the default)."""
    out = f"{COMMAND} --seeds {args.seeds}"
    out += f" --first-seed {args.first_seed}" if args.first_seed else ""
    for opt in ("dialects", "scenarios", "rules"):
        val = getattr(args, opt)
        out += f" --{opt} {','.join(listed(val))}" if val else ""
    out += " --no-lab" if args.no_lab else ""
    out += " --no-cases" if args.no_cases else ""
    return out


def unknown(args: argparse.Namespace) -> str:
    """What in the options names nothing known ("" when all is known)."""
    known = {
        "dialects": set(DIALECTS),
        "scenarios": {s["name"] for s in list_scenarios()},
        "rules": {r.id for r in load_kb().rules if r.kind == "cause"},
    }
    for opt, names in known.items():
        bad = [x for x in listed(getattr(args, opt, "")) if x not in names]
        if bad:
            return f"--{opt}: {bad[0]!r} is not one of {', '.join(sorted(names))}"
    return ""


def incidents(args: argparse.Namespace) -> list[leave_one_out.Incident]:
    """The cases the options ask for."""
    rules = listed(args.rules)
    expected = {name: f.expected for name, f in FAULTS.items()}
    return leave_one_out.gather(
        seeds=args.seeds,
        first_seed=args.first_seed,
        dialects=listed(args.dialects) or None,
        scenarios=listed(args.scenarios) or None,
        lab=None if args.no_lab else (LAB_BUNDLES, expected),
        case_folders=() if args.no_cases else CASE_FOLDERS,
        rules=rules,
    )


def sources(args: argparse.Namespace) -> str:
    """Where the cases came from, in words."""
    parts = []
    if args.seeds:
        ds = ", ".join(listed(args.dialects)) or "every dialect"
        last = args.first_seed + args.seeds - 1
        parts.append(f"the simulator's scenarios (seeds {args.first_seed}–{last}, {ds})")
    if not args.no_lab:
        parts.append(f"the live lab's bundles (`{LAB_BUNDLES.relative_to(ROOT)}/`)")
    if not args.no_cases:
        parts.append(
            "the request-path frames ("
            + ", ".join(f"`{p.relative_to(ROOT)}/`" for p in CASE_FOLDERS)
            + ")"
        )
    return "; ".join(parts) or "none"


def main(argv: list[str] | None = None) -> int:
    ap = parser()
    args = ap.parse_args(argv)
    if args.seeds < 0 or args.first_seed < 0:
        ap.error("--seeds and --first-seed are 0 or more")
    if bad := unknown(args):
        ap.error(bad)
    cases = incidents(args)
    if not cases:
        ap.error("no case has a cause rule's truth with these options")

    def progress(what: str, frac: float) -> None:
        print(f"\r{frac:6.1%} {what[:60]:60s}", end="", file=sys.stderr, flush=True)

    t = time.perf_counter()
    run = leave_one_out.run(cases, progress=progress)
    wall = time.perf_counter() - t
    print(file=sys.stderr)
    body = (
        f"Sources: {sources(args)}. Each case is diagnosed with its rule R taken out of the "
        "knowledge base; *right node*: a root at one of R's parts on the instances the fault "
        "touched; *signal in three*: that root is a change no rule names with one of R's "
        "signals among its first three; *other first*: another rule, not a true root, named "
        "first at the confidence users see (calibrated, docs/calibration.md). Shares are of "
        "every scored case.\n\n"
        f"{leave_one_out.to_markdown(run)}\n\nWall time: {wall:.0f} s.\n"
    )
    print(body)
    if not args.no_write:
        write_section("leave_one_out", "Leave one rule out", command(args), body, path=args.page)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
