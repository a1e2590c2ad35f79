"""Diagnostic accuracy over the scenario suite, and diagnosis speed on a 100-instance bundle.

.venv/bin/python -m bench.accuracy [--seeds N] [--holdout M] [--dialects vllm,triton] [--quick]
[--jobs 2] [--section NAME] writes the "accuracy" section of docs/benchmarks.md (or NAME's).

Seeds 0..N-1 are the ones the rules were examined against while they were written; seeds
N..N+M-1 are a hold-out nobody looked at, reported apart, to show how much of the figure is
fitted to the simulator's particular draws. Once a hold-out's misses are examined to change
the rules, its seeds join the examined ones and the hold-out moves on.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from bench.report import write_section
from infersight.diagnose import diagnose
from infersight.frame import MetricFrame, SignalSeries
from infersight.lab.evaluate.accuracy import AccuracyReport, run_accuracy, score, share_wrong
from infersight.signals import all_signals

COMMAND = ".venv/bin/python -m bench.accuracy"
#: the live lab's incidents, frozen as bundles (how each was recorded: the folder's README)
LAB_BUNDLES = Path(__file__).resolve().parents[1] / "tests" / "diagnose" / "lab_incidents"


def _synthetic(instances: int, hours: float, step: float, seed: int, shift: float) -> MetricFrame:
    rng = np.random.default_rng(seed)
    n = int(hours * 3600 / step)
    names = tuple(f"node-{i}" for i in range(instances))
    series = {}
    for sig in all_signals():
        base = rng.uniform(0.2, 0.6)
        v = base * (1 + 0.05 * rng.standard_normal((instances, n)))
        if shift and sig == "service.e2e_latency_p99":
            v[:, int(0.7 * n) :] *= shift
        series[sig] = SignalSeries(names, v)
    return MetricFrame(1.75e9, step, n, series)


def speed(instances: int = 100, repeats: int = 3) -> str:
    """Diagnose 100 instances × every signal × 1 h (15 s grid) with 1 h and 1 d baselines,
    read back from a bundle file; `repeats` (at least 1) reads and diagnoses, medians kept."""
    from infersight.bundle import read_bundle, write_bundle

    wins = {
        "incident": _synthetic(instances, 1, 15.0, 0, 3.0),
        "baseline-1h": _synthetic(instances, 1, 15.0, 1, 0.0),
        "baseline-1d": _synthetic(instances, 1, 15.0, 2, 0.0),
    }
    reads, times = [], []
    with tempfile.TemporaryDirectory() as d:
        path = write_bundle(Path(d) / "speed.tar.gz", wins, {"kind": "synthetic"})
        for _ in range(repeats):  # the first read also warms the caches
            t = time.perf_counter()
            bundle = read_bundle(path)
            reads.append(time.perf_counter() - t)
    frames = bundle.windows
    for _ in range(repeats):
        t = time.perf_counter()
        diagnose(frames)
        times.append(time.perf_counter() - t)
    inc = frames["incident"]
    t_read, t_dx = sorted(reads)[repeats // 2], sorted(times)[repeats // 2]
    verdict = "met" if t_read + t_dx < 1.0 else "not met"
    return (
        f"{instances} instances × {len(inc.signals)} signals × {inc.n} points (1 h at 15 s) "
        f"with 2 baselines, medians of {repeats}: bundle read (tar.gz, verified) {t_read:.2f} s "
        f"(first {reads[0]:.2f} s), detect + diagnose {t_dx:.2f} s; "
        f"bundle to diagnosis **{t_read + t_dx:.2f} s** (goal < 1 s: {verdict})."
    )


def per_dialect(report: AccuracyReport) -> str:
    """Observable cases, AC@1 and AC@3 per dialect, as a markdown table."""
    lines = ["| dialect | observable cases | AC@1 | AC@3 |", "|---|---|---|---|"]
    for d in sorted({c.dialect for c in report.cases}):
        n = sum(1 for c in report.faulty() if c.dialect == d)
        lines.append(
            f"| {d} | {n} | {score(report.ac(1, dialect=d))} | {score(report.ac(3, dialect=d))} |"
        )
    n = len(report.faulty())
    lines.append(f"| all | {n} | {score(report.ac(1))} | {score(report.ac(3))} |")
    return "\n".join(lines)


def with_per_dialect(report: AccuracyReport) -> str:
    """The report's markdown with the per-dialect table after the overall figures."""
    md = report.to_markdown()
    head, sep, rest = md.partition("\n\n| scenario |")
    if not sep:
        return md + "\n\nPer dialect:\n\n" + per_dialect(report)
    return head + "\n\nPer dialect:\n\n" + per_dialect(report) + sep + rest


def lab_incidents(folder: Path = LAB_BUNDLES) -> str:
    """The live lab's frozen incidents, scored as the suite is: the first root (AC@1) or one of
    the first three (AC@3) among the fault's expected answers; `healthy` must name none."""
    from infersight.bundle import read_bundle
    from infersight.lab.live.faults import FAULTS

    rows, hits1, hits3, n = [], 0, 0, 0
    for path in sorted(folder.glob("*.tar.gz")):
        name = path.name.removesuffix(".tar.gz")
        roots = [r.hypothesis for r in diagnose(dict(read_bundle(path).windows)).root_causes]
        named = ", ".join(roots[:3]) or "(no root)"
        if name == "healthy":
            rows.append(f"| {name} | no root | {named} | {'no' if roots else 'yes'} | |")
            continue
        expected = FAULTS[name].expected
        n += 1
        at1, at3 = bool(roots) and roots[0] in expected, bool(set(roots[:3]) & set(expected))
        hits1, hits3 = hits1 + at1, hits3 + at3
        rows.append(
            f"| {name} | {', '.join(expected)} | {named} | {'yes' if at1 else '**no**'} "
            f"| {'yes' if at3 else '**no**'} |"
        )
    if not n:
        return ""
    return "\n".join(
        [
            "### Incidents from real processes: the live lab's frozen bundles",
            "",
            f"Real processes under load, scraped by a real Prometheus, each fault frozen as a "
            f"bundle (`{LAB_BUNDLES.relative_to(LAB_BUNDLES.parents[2])}/`, its README says "
            f"how). {n} faults: **AC@1 {hits1 / n:.3f}, AC@3 {hits3 / n:.3f}**. A fault's "
            "expected answers are `infersight.lab.live.faults`' (its root cause, or the "
            "right layer's hypothesis where the metrics cannot tell more).",
            "",
            "| bundle | expected | first roots named | AC@1 | AC@3 |",
            "|---|---|---|---|---|",
            *rows,
        ]
    )


def holdout_summary(report: AccuracyReport, first: int, last: int) -> str:
    """The hold-out seeds in a few lines: overall figures, misses, false roots."""
    lines = [
        f"### Hold-out: seeds {first}–{last}",
        "",
        "Never examined while the rules were written (once its misses are examined to change "
        "the rules, its seeds join the examined ones and the hold-out moves on). "
        f"{len(report.faulty())} observable cases "
        f"({len(report.unobservable())} not observable, {len(report.not_shown())} whose draw "
        f"never produced its fault), {len(report.healthy())} healthy "
        f"windows: **AC@1 {score(report.ac(1))}, AC@3 {score(report.ac(3))}; root cause "
        f"claimed on {share_wrong(report.false_root_rate())} of healthy windows.**",
    ]
    lines += report.misses_and_false_roots(1)
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument(
        "--seeds",
        type=int,
        default=75,
        help="seeds examined while tuning: 0..N-1 (default %(default)s)",
    )
    ap.add_argument(
        "--holdout",
        type=int,
        default=5,
        help="hold-out seeds after --seeds (0: none; default %(default)s)",
    )
    ap.add_argument(
        "--holdout-from",
        type=int,
        default=None,
        help="first hold-out seed (default: right after --seeds); with fewer --seeds, keeps "
        "the hold-out on seeds never examined",
    )
    ap.add_argument(
        "--dialects",
        default="",
        help="comma-separated exporter dialects (default: every dialect)",
    )
    ap.add_argument(
        "--section",
        default="accuracy",
        help="the section of docs/benchmarks.md written (default %(default)s): another name keeps "
        "the whole suite's figures, e.g. accuracy_kubernetes with --dialects kubernetes",
    )
    ap.add_argument("--quick", action="store_true", help="1 seed, vllm only, no file written")
    ap.add_argument("--jobs", type=int, default=2, help="processes (one (scenario, seed) each)")
    args = ap.parse_args(argv)
    seeds = 1 if args.quick else args.seeds
    dialects = ["vllm"] if args.quick else [d for d in args.dialects.split(",") if d] or None

    def progress(what: str, frac: float) -> None:
        print(f"\r{frac:6.1%} {what:40s}", end="", file=sys.stderr, flush=True)

    # speed first, on a machine not yet warm from the suite's two worker processes
    try:
        speed_line = "Speed (measured before the suite): " + speed() + "\n"
    except Exception as exc:  # speed is reported, never fatal to the accuracy table
        speed_line = f"Speed: not measured ({exc}).\n"
    t = time.perf_counter()
    report = run_accuracy(seeds=seeds, dialects=dialects, progress=progress, jobs=args.jobs)
    wall = time.perf_counter() - t
    print(file=sys.stderr)
    body = with_per_dialect(report) + f"\n\nWall time of the suite: {wall:.0f} s.\n\n"
    holdout = 0 if args.quick else args.holdout
    if holdout > 0:
        first = seeds if args.holdout_from is None else args.holdout_from
        held = run_accuracy(
            seeds=holdout, dialects=dialects, progress=progress, jobs=args.jobs, first_seed=first
        )
        print(file=sys.stderr)
        body += holdout_summary(held, first, first + holdout - 1) + "\n\n"
    if not args.quick:
        lab = lab_incidents()
        body += (lab + "\n\n") if lab else ""
    body += speed_line
    print(body)
    if not args.quick:
        # the defaults move with the hold-out: name the seeds this run used
        command = f"{COMMAND} --seeds {seeds} --holdout {holdout}"
        if args.holdout_from is not None:
            command += f" --holdout-from {args.holdout_from}"
        if dialects:
            command += f" --dialects {','.join(dialects)}"
        title = "Diagnostic accuracy over the scenario suite"
        if args.section != "accuracy":
            command += f" --section {args.section}"
            title += f" ({', '.join(dialects or ['every dialect'])})"
        write_section(args.section, title, command, body)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
