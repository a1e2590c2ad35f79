"""How detect and diagnose scale with the fleet: 100, 400 and 1000 instances.

    .venv/bin/python -m bench.diagnose_scaling [--quick]

Windows: the detection benchmark's synthetic fleet (`bench.detect_bench.synthetic`: every
catalog signal but `infra.target_up`, 1 h at 15 s, noise, 1% gaps, a step ×2.5 on every tenth
signal of one instance in fifty) with its incident, baseline-1h and baseline-1d windows.
Each size is timed after a warm-up run, median of 3: detect alone, diagnose given that
detection, and diagnose running its own detection (the two together). Ratios are to 100
instances; linear is the size ratio. Bundle to diagnosis at 100 instances is the accuracy
benchmark's `speed()`, called, not copied.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time
from collections.abc import Callable
from functools import partial
from typing import Any

from bench import accuracy, detect_bench
from bench.report import write_section
from infersight.detect import detect
from infersight.diagnose import diagnose
from infersight.frame import MetricFrame
from infersight.signals import all_signals

COMMAND = ".venv/bin/python -m bench.diagnose_scaling"
SIZES = (100, 400, 1000)
POINTS = 240  # 1 h at 15 s
STEP = 15.0
WINDOWS = ("incident", "baseline-1h", "baseline-1d")
#: the Bar: 400 instances in at most this multiple of 100's time (linear is 4.0)
BAR_400 = 4.2


def windows(instances: int, seed: int = 0) -> dict[str, MetricFrame]:
    """The detection benchmark's fleet at this size, with the windows a pull gives."""
    every = len(all_signals()) - 1  # all signals but infra.target_up, as detect_bench
    w = detect_bench.synthetic(instances, every, POINTS, STEP, seed)
    return {k: w[k] for k in WINDOWS}


def _median(fn: Callable[[], Any], repeats: int) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of one call, medians of `repeats` after a warm-up call
    (caches, imports, the knowledge base). CPU time is what the ratios are taken on: on a
    shared machine the wall clock also counts the other tenants' turns."""
    fn()
    cpu, wall = [], []
    for _ in range(repeats):
        t, c = time.perf_counter(), time.process_time()
        fn()
        cpu.append(time.process_time() - c)
        wall.append(time.perf_counter() - t)
    return statistics.median(cpu), statistics.median(wall)


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


Timing = dict[int, dict[str, tuple[float, float]]]
PARTS = ("detect", "diagnose", "detect + diagnose")


def measure(sizes: tuple[int, ...], repeats: int) -> Timing:
    """size → part → (CPU, wall) seconds: detect, diagnose given that detection, and
    `diagnose(windows)` running its own detection."""
    out: Timing = {}
    for n in sizes:
        w = windows(n)
        det = detect(w)
        out[n] = {
            PARTS[0]: _median(partial(detect, w), repeats),
            PARTS[1]: _median(partial(diagnose, w, detection=det), repeats),
            PARTS[2]: _median(partial(diagnose, w), repeats),
        }
        print(n, "instances:", ", ".join(f"{k} {c:.2f} s CPU" for k, (c, _) in out[n].items()))
    return out


def ratio(times: Timing, n: int, part: str) -> float:
    """CPU time at n instances over CPU time at the smallest size."""
    return times[n][part][0] / times[min(times)][part][0]


def table(times: Timing) -> str:
    base = min(times)
    rows = [
        "| instances | detect | diagnose | detect + diagnose | wall (detect + diagnose) | "
        f"detect ×{base} | diagnose ×{base} | detect + diagnose ×{base} | linear |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for n, t in sorted(times.items()):
        cells = " | ".join(f"{t[p][0]:.2f} s" for p in PARTS)
        ratios = " | ".join(f"{ratio(times, n, p):.2f}" for p in PARTS)
        rows.append(f"| {n} | {cells} | {t[PARTS[2]][1]:.2f} s | {ratios} | {n / base:.1f} |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true", help="100 and 400 only, 1 run, no file")
    args = ap.parse_args(argv)
    sizes, repeats = (SIZES[:2], 1) if args.quick else (SIZES, 3)
    bundle = accuracy.speed() if not args.quick else "not measured (--quick)."
    times = measure(sizes, repeats)
    scale = ratio(times, 400, PARTS[2])
    verdict = "met" if scale <= BAR_400 else "not met"
    signals = len(windows(1)["incident"].signals)
    body = (
        f"CPU: {cpu_model()}, `nproc` {os.cpu_count()}. The machine is shared with other "
        "benchmarks: absolute times are noisy, compare the ratios within this run. Times are "
        "CPU seconds of this process (the wall clock also counts other tenants' turns; one "
        "column shows it), ratios are of CPU time.\n\n"
        f"Every size: {signals} signals × {POINTS} points (1 h at 15 s) in 3 windows "
        "(incident, baseline-1h, baseline-1d), the detection benchmark's synthetic fleet "
        "(noise, 1% gaps, a step ×2.5 on every tenth signal of one instance in fifty). "
        f"Medians of {repeats} after a warm-up run; *diagnose* is given the detection, "
        "*detect + diagnose* runs `diagnose(windows)` alone.\n\n"
        + table(times)
        + f"\n\nBar (400 instances ≤ {BAR_400}× the time of 100, detect + diagnose): "
        f"**{scale:.2f}×, {verdict}**.\n\n"
        f"Bundle to diagnosis, 100 instances (`bench.accuracy.speed()`, wall clock): {bundle}\n"
    )
    print(body)
    if not args.quick:
        write_section("diagnose_scaling", "Detect and diagnose: scaling with the fleet",
                      COMMAND, body)  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
