"""Fleet simulator speed: 26 h × 16 instances at 15 s, all signals (goal ≤ 10 s).

Run: .venv/bin/python -m bench.sim_speed
"""

from __future__ import annotations

import time

from bench.report import usage, write_section
from infersight.lab.sim import simulate

SCENARIOS = ("healthy_diurnal", "incident_0217", "cache_stampede")
HOURS, INSTANCES, STEP = 26.0, 16, 15.0
GOAL_S = 10.0


def main() -> None:
    rows = [
        f"| scenario | grid points | signals | points | wall s | goal ≤ {GOAL_S:g} s |",
        "|---|---:|---:|---:|---:|---|",
    ]
    for name in SCENARIOS:
        t0 = time.perf_counter()
        res = simulate(name, hours=HOURS, instances=INSTANCES, seed=1, step=STEP)
        wall = time.perf_counter() - t0
        f = res.frame
        verdict = "**met**" if wall <= GOAL_S else "**not met**"
        rows.append(
            f"| {name} | {f.n} | {len(f.signals)} | {f.points()} | {wall:.2f} | {verdict} |"
        )
    # write_section states the machine and the reproducing command.
    body = (
        f"{HOURS:g} h × {INSTANCES} instances at {STEP:g} s resolution, every signal the model "
        f"produces (goal ≤ {GOAL_S:g} s per scenario).\n\n" + "\n".join(rows) + "\n"
    )
    print(body)
    write_section("sim", "Fleet simulator speed", ".venv/bin/python -m bench.sim_speed", body)


if __name__ == "__main__":
    usage(__doc__)
    main()
