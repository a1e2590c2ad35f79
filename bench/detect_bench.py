"""Detection benchmark: speed at fleet scale, and quality over the simulator's scenarios.

    .venv/bin/python -m bench.detect_bench [--quick] [--paired OTHER_CHECKOUT]

Speed: 1000 instances × 60 signals × 1 h at 15 s, with three baseline windows (synthetic,
noisy, with a few injected steps); with --paired, also against another checkout (a
`git archive` of an earlier commit) in alternating processes, as a ratio that holds on a busy
machine. Quality: every scenario of `infersight.lab.sim` (when it
is installed): recall of the signals a correct detector must flag on the ground-truth
instances, onset error, and findings over healthy days scanned hour by hour.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from bench.report import write_section
from infersight.detect import detect
from infersight.frame import MetricFrame, SignalSeries
from infersight.signals import all_signals

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "detect"))

COMMAND = ".venv/bin/python -m bench.detect_bench"


def synthetic(
    instances: int, signals: int, n: int, step: float, seed: int = 0
) -> dict[str, MetricFrame]:
    rng = np.random.default_rng(seed)
    names = [s for s in all_signals() if s != "infra.target_up"][:signals]
    insts = tuple(f"node-{i}" for i in range(instances))
    start = 1_750_000_000.0
    levels = {
        name: 0.5 if all_signals()[name].unit == "ratio" else 10.0 ** rng.uniform(-2, 2)
        for name in names
    }
    out: dict[str, MetricFrame] = {}
    for w, lag in (("incident", 0.0), ("baseline-1h", 3600.0), ("baseline-1d", 86400.0),
                   ("baseline-7d", 7 * 86400.0)):  # fmt: skip
        series: dict[str, SignalSeries] = {}
        for k, name in enumerate(names):
            v = levels[name] * (1 + 0.05 * rng.standard_normal((instances, n)))
            v[rng.random((instances, n)) < 0.01] = np.nan
            if w == "incident" and k % 10 == 0:
                v[: instances // 50, n // 2 :] *= 2.5  # a few real anomalies
            series[name] = SignalSeries(insts, v)
        out[w] = MetricFrame(start - lag, step, n, series)
    return out


def _best_of(w: dict[str, MetricFrame], runs: int) -> tuple[float, int]:
    times = []
    findings = 0
    for _ in range(runs):
        t0 = time.perf_counter()
        r = detect(w)
        times.append(time.perf_counter() - t0)
        findings = len(r.anomalies)
    return min(times), findings


def speed() -> str:
    n = 240
    detect(synthetic(20, 5, n, 15.0))  # warm-up
    every = len(all_signals()) - 1  # all signals but infra.target_up
    rows = [
        "| instances | signals | points/series | windows | best of 3 | series/s | findings |",
        "|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for inst, sigs in ((1000, 60), (100, every)):
        w = synthetic(inst, sigs, n, 15.0)
        best, found = _best_of(w, 3)
        pts = inst * sigs * n * 4
        rows.append(
            f"| {inst} | {sigs} | {n} | 4 ({pts / 1e6:.0f} M points) | {best:.2f} s | "
            f"{inst * sigs / best:,.0f} | {found} |"
        )
    return "\n".join(rows) + "\n"


def quality(seeds: tuple[int, ...], instances: int) -> str:
    try:
        from simcases import (  # type: ignore[import-not-found]
            EXPECT,
            HEALTHY,
            healthy_findings,
            run_case,
        )
    except ImportError as exc:  # the simulator is not there
        return f"Simulator unavailable ({exc}); quality not measured.\n"
    rows: list[str] = []
    recalls: list[float] = []
    errors: list[float] = []
    for sc in EXPECT:
        for seed in seeds:
            c = run_case(sc, instances=instances, seed=seed)
            recalls.append(c.recall)
            if c.onset_error_s is not None:
                errors.append(abs(c.onset_error_s))
            err = "—" if c.onset_error_s is None else f"{c.onset_error_s:+.0f} s"
            missed = ", ".join(sorted(set(c.expected) - set(c.hit))) or "—"
            rows.append(
                f"| {sc} | {seed} | {c.recall:.2f} | {missed} | {err} | "
                f"{c.truth_instances_flagged}/{c.truth_instances} | {c.findings} |"
            )
    healthy_rows: list[str] = []
    per_day: dict[str, list[float]] = {"yesterday": [], "hour before only": []}
    for sc in HEALTHY:
        for seed in seeds:
            # as a pull gives them (a day of history), and with only the hour before
            for label, history in (("yesterday", 25.0), ("hour before only", 0.0)):
                counts = healthy_findings(
                    sc, hours=24.0, instances=instances, seed=seed, history_h=history
                )
                day = sum(counts) * 24.0 / len(counts)
                per_day[label].append(day)
                healthy_rows.append(
                    f"| {sc} | {seed} | {label} | {len(counts)} | {sum(counts)} | "
                    f"{sum(1 for c in counts if c)} | {day:.1f} |"
                )
    e = np.asarray(errors)
    head = (
        f"Simulator suite: {len(EXPECT)} fault scenarios × seeds {list(seeds)}, {instances} "
        "instances; incident window 1 h ending 20 min after the ground-truth onset (100 min for "
        "the VRAM leak), with the hour before and the day before where the run covers them.\n\n"
        f"- recall of expected signals on truth instances: **{np.mean(recalls):.2f}**\n"
        f"- onset error of the earliest expected finding: median **{np.median(e):.0f} s**, "
        f"p90 {np.quantile(e, 0.9):.0f} s (n={e.size})\n"
        "- findings per healthy day (1 h windows, hour by hour): mean "
        f"**{np.mean(per_day['yesterday']):.1f}** with yesterday's baseline (what a pull "
        f"provides), {np.mean(per_day['hour before only']):.1f} with only the hour before"
        "\n\n"
    )
    return (
        head + "| scenario | seed | recall | missed | onset error | truth instances flagged | "
        "findings |\n|---|---:|---:|---|---:|---:|---:|\n"
        + "\n".join(rows)
        + "\n\n| healthy scenario | seed | baselines | windows | findings | "
        "windows with findings | per day |\n|---|---:|---|---:|---:|---:|---:|\n"
        + "\n".join(healthy_rows)
        + "\n"
    )


def _time_checkout(root: Path, rounds: int) -> list[float]:
    """Seconds of `detect` on the 1000 × 60 windows, run by the checkout at `root` (its own
    src/ and bench/) in a fresh process, one figure per round (best of 3 each)."""
    code = (
        "import sys,time;sys.path[:0]=[sys.argv[1]+'/src',sys.argv[1]];"
        "from bench.detect_bench import synthetic,_best_of;from infersight.detect import detect;"
        "detect(synthetic(20,5,240,15.0));w=synthetic(1000,60,240,15.0);"
        "print(_best_of(w,3)[0])"
    )
    out = []
    for _ in range(rounds):
        res = subprocess.run(
            [sys.executable, "-c", code, str(root)], capture_output=True, text=True, check=True
        )
        out.append(float(res.stdout.strip().splitlines()[-1]))
    return out


def paired(other: Path, rounds: int = 3) -> str:
    """This checkout against another (e.g. a `git archive` of the commit before), alternately,
    so that a loaded shared machine slows both alike: the ratio is the figure to read."""
    here = Path(__file__).resolve().parent.parent
    mine: list[float] = []
    theirs: list[float] = []
    for _ in range(rounds):
        theirs += _time_checkout(other, 1)
        mine += _time_checkout(here, 1)
    ratio = float(np.median(mine) / np.median(theirs))
    return (
        f"Paired with `{other}` (alternating fresh processes, best of 3 each, {rounds} rounds): "
        f"this checkout {' / '.join(f'{t:.2f}' for t in mine)} s, the other "
        f"{' / '.join(f'{t:.2f}' for t in theirs)} s: ratio of medians **{ratio:.2f}**.\n"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--quick", action="store_true", help="seed 1 only, 6 instances")
    ap.add_argument(
        "--paired",
        type=Path,
        metavar="OTHER_CHECKOUT",
        help="also time another checkout (a `git archive` of an earlier commit), alternately",
    )
    ap.add_argument("--no-write", action="store_true", help="print only, write no section")
    args = ap.parse_args(argv)
    if args.paired is not None and not (args.paired / "src" / "infersight").is_dir():
        ap.error(f"--paired {args.paired}: no src/infersight there; give a checkout's root")
    body = "### Speed\n\n" + speed()
    if args.paired is not None:
        body += "\n" + paired(args.paired)
    body += "\n### Quality\n\n"
    body += quality((1,) if args.quick else (1, 2), 6 if args.quick else 8)
    print(body)
    if not args.no_write:
        command = COMMAND + (f" --paired {args.paired}" if args.paired is not None else "")
        write_section("detect", "Detection: speed and quality", command, body)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
