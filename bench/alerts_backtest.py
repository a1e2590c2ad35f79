"""Backtest of the rendered alert rules: every simulator scenario backfilled into a real
Prometheus, the rules loaded and replayed (infersight.alerts.backtest).

Healthy scenarios run a whole day after their day of history: their firings are the false
alerts per healthy day. Each incident runs 6 hours after its history: did its own alert fire,
how long after the onset, and what else fired.

Each run's outcome is kept under out/alerts_backtest/, so the sweep can be run in parts
(`--scenarios a,b`) and the table is always written from every outcome there.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from bench.report import write_section
from infersight.alerts.backtest import EXPECTED, HEALTHY, BacktestConfig, run_scenario
from infersight.lab.sim.scenarios import SCENARIOS, get_scenario

OUT = Path("out/alerts_backtest")
COMMAND = ".venv/bin/python -m bench.alerts_backtest [--scenarios a,b] [--seeds 1,2]"


def _run(scenario: str, seed: int) -> dict[str, object]:
    healthy = scenario in HEALTHY
    cfg = BacktestConfig(hours=24.0 if healthy else 6.0)
    t0 = time.perf_counter()
    out = run_scenario(scenario, seed, cfg)
    return {
        **out.to_dict(),
        "healthy": healthy,
        "hours": cfg.hours,
        "firings": len(out.firings),
        "after_onset_min": {
            a: round((t - out.onset) / 60.0, 1) for a, t in out.fired.items()
        } if out.onset is not None else {},
        "expected": sorted(out.expected),
        "seconds": round(time.perf_counter() - t0, 1),
    }  # fmt: skip


def _table(rows: list[dict[str, object]]) -> str:
    healthy = [r for r in rows if r["healthy"]]
    sick = [r for r in rows if not r["healthy"]]
    lines = [
        "False alerts on healthy days (3 instances, vLLM + dcgm-exporter + node_exporter + "
        "redis_exporter + a vector DB, one reading a minute; rules replayed at their 1m "
        "evaluation interval with their `for:`):",
        "",
        "| healthy scenario | seed | hours replayed | alerts fired | firings | per day |",
        "|---|---|---|---|---|---|",
    ]
    for r in healthy:
        hours = float(r["hours"])  # type: ignore[arg-type]
        n = int(r["firings"])  # type: ignore[call-overload]
        lines.append(
            f"| {r['scenario']} | {r['seed']} | {hours:g} | {', '.join(r['fired']) or '-'} "  # type: ignore[arg-type]
            f"| {n} | {n * 24 / hours:.1f} |"
        )
    lines += [
        "",
        "Incidents (6 hours after a day of history): the alert each should fire, minutes from "
        "the onset to its first firing, and what else fired (consequences the seed expects are "
        "allowed; `other` lists anything outside them, and every alert of a scenario that no "
        "alert is about). Scenarios whose cause cannot happen in a vLLM server are left out.",
        "",
        "| scenario | seed | expected | fired (min after onset) | missed | other |",
        "|---|---|---|---|---|---|",
    ]
    for r in sick:
        # judged against EXPECTED as it is now, so a kept outcome needs no rerun
        must, may = EXPECTED.get(str(r["scenario"]), (frozenset(), frozenset()))
        got: set[str] = set(r["fired"])  # type: ignore[call-overload]
        mins: dict[str, float] = r["after_onset_min"]  # type: ignore[assignment]
        fired = ", ".join(f"{a} ({m:g})" for a, m in sorted(mins.items(), key=lambda x: x[1]))
        lines.append(
            f"| {r['scenario']} | {r['seed']} | {', '.join(sorted(must)) or '-'} "
            f"| {fired or '-'} | {', '.join(sorted(must - got)) or '-'} "
            f"| {', '.join(sorted(got - must - may)) or '-'} |"
        )
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--scenarios", default="", help="comma-separated (default: all)")
    ap.add_argument("--seeds", default="1", help="comma-separated seeds for healthy days")
    ap.add_argument("--fresh", action="store_true", help="rerun outcomes already kept")
    args = ap.parse_args()
    names = [s for s in args.scenarios.split(",") if s] or list(SCENARIOS)
    seeds = [int(s) for s in args.seeds.split(",")]
    OUT.mkdir(parents=True, exist_ok=True)
    for name in names:
        if not get_scenario(name).applies_to(BacktestConfig().dialect):
            print(f"{name}: cannot happen in a {BacktestConfig().dialect} server; left out")
            continue
        for seed in seeds if name in HEALTHY else [1]:
            path = OUT / f"{name}-{seed}.json"
            if path.exists() and not args.fresh:
                continue
            row = _run(name, seed)
            path.write_text(json.dumps(row, indent=1))
            print(f"{name} seed {seed}: fired {row['fired']} ({row['seconds']} s)", flush=True)
    rows = [json.loads(p.read_text()) for p in sorted(OUT.glob("*.json"))]
    order = {s: i for i, s in enumerate(SCENARIOS)}
    rows.sort(key=lambda r: (order.get(r["scenario"], 99), r["seed"]))
    unknown = sorted(set(EXPECTED) - set(order))
    assert not unknown, f"EXPECTED names unknown scenarios: {unknown}"
    write_section("alerts", "Alert rules on simulated incidents", COMMAND, _table(rows))


if __name__ == "__main__":
    main()
