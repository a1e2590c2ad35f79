"""Fleet simulator memory: `infersight lab sim -n N` for 26 h (25 h of history and the incident
hour) into a bundle, peak resident memory of the whole command (goal: 1,000 instances within
8 GiB).

Each size runs in its own process; its peak RSS is read from the kernel (`os.wait4`), so the
figure is the command's, interpreter and imports included.

Run: .venv/bin/python -m bench.sim_memory [--instances 10,100,1000]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.report import write_section

GOAL_GIB, GOAL_INSTANCES = 8.0, 1000
SCENARIO, HISTORY, DURATION, DIALECT = "incident_0217", "25h", "1h", "vllm"


def peak_rss(instances: int, out: Path) -> tuple[float, float]:
    """(peak RSS in MiB, wall seconds) of one `lab sim` run."""
    args = [sys.executable, "-c", "from infersight.cli import main; main()", "lab", "sim",
            "-s", SCENARIO, "-n", str(instances), "--history", HISTORY, "--duration", DURATION,
            "-d", DIALECT, "-o", str(out), "--overwrite", "-f", "json"]  # fmt: skip
    t0 = time.perf_counter()
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        err = proc.stderr.read().decode() if proc.stderr else ""
        raise SystemExit(f"lab sim -n {instances} failed: {err.strip()}")
    return usage.ru_maxrss / 1024.0, wall  # ru_maxrss is in KiB on Linux


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--instances", default="10,100,1000")
    sizes = [int(x) for x in parser.parse_args().instances.split(",") if x.strip()]
    rows = ["| instances | peak RSS | per instance | wall s |", "|---:|---:|---:|---:|"]
    results: list[tuple[int, float]] = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            mib, wall = peak_rss(n, Path(tmp) / f"sim{n}.tar.gz")
            results.append((n, mib))
            rows.append(f"| {n:,} | {mib / 1024:.2f} GiB | {mib / n:.1f} MiB | {wall:.0f} |")
            print(rows[-1], flush=True)
    verdict = ""
    at_goal = [mib for n, mib in results if n == GOAL_INSTANCES]
    if at_goal:
        met = at_goal[0] / 1024 <= GOAL_GIB
        verdict = (
            f"\n\n{GOAL_INSTANCES:,} instances: {at_goal[0] / 1024:.2f} GiB against the "
            f"{GOAL_GIB:g} GiB goal: **{'met' if met else 'not met'}**."
        )
    body = (
        f"`infersight lab sim -s {SCENARIO} -n N --history {HISTORY} --duration {DURATION} "
        f"-d {DIALECT} -o sim.tar.gz`: 26 h at 15 s, peak resident memory of the whole command "
        "(each size in its own process, read with `wait4`).\n\n"
        + "\n".join(rows)
        + verdict
        + "\n\nHow: a bundle's windows (the incident hour and the baselines an hour and a day "
        "earlier) are emitted and mapped one by one from slices of the run, never the whole "
        "day as exporter samples (`lab/sim/outputs.py: sim_windows`; a test checks they equal "
        "the windows cut from the whole run); the run's canonical frame is built only when "
        "something asks for it, which an exporter dialect never does; the request-time "
        "quantile table is float32. Before (at 0b4c465, same command): 10 instances 680 MiB, "
        "40 instances 2.22 GiB (55 MiB per instance; 1,000 would have needed about 54 GiB).\n"
    )
    print(body)
    command = ".venv/bin/python -m bench.sim_memory --instances " + ",".join(map(str, sizes))
    write_section("sim-memory", "Fleet simulator memory", command, body)


if __name__ == "__main__":
    main()
