"""Diagnostic accuracy over the simulator's scenario suite, read through every exporter dialect.

For each scenario × seed × dialect the run is simulated, its raw exporter metrics mapped back
to canonical signals (what a user has), windowed around the moment an alert would fire, and
diagnosed. AC@k: a true root among the top k root causes (for a compound incident, every true
root within the top max(k, number of roots)). Healthy runs are diagnosed at several moments of
the day; any root cause claimed there is a false one.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from infersight.diagnose.engine import diagnose
from infersight.diagnose.kb import KnowledgeBase, load_kb
from infersight.diagnose.scenario_windows import alert_time, healthy_times, windows_at
from infersight.lab.sim import list_scenarios, simulate
from infersight.lab.sim.dialects import DIALECTS

Progress = Callable[[str, float], None]


@dataclass(frozen=True)
class Case:
    scenario: str
    seed: int
    dialect: str
    truth: tuple[str, ...]
    predicted: tuple[str, ...]
    seconds: float

    def hit(self, k: int) -> bool:
        if not self.truth:
            return not self.predicted
        top = self.predicted[: max(k, len(self.truth))]
        if len(self.truth) > 1:
            return all(t in top for t in self.truth)
        return self.truth[0] in self.predicted[:k]


@dataclass
class AccuracyReport:
    cases: list[Case] = field(default_factory=list)

    def faulty(self) -> list[Case]:
        return [c for c in self.cases if c.truth]

    def healthy(self) -> list[Case]:
        return [c for c in self.cases if not c.truth]

    def ac(self, k: int, scenario: str | None = None, dialect: str | None = None) -> float:
        cs = [
            c
            for c in self.faulty()
            if (scenario is None or c.scenario == scenario)
            and (dialect is None or c.dialect == dialect)
        ]
        return sum(c.hit(k) for c in cs) / len(cs) if cs else float("nan")

    def false_root_rate(self) -> float:
        hs = self.healthy()
        return sum(1 for c in hs if c.predicted) / len(hs) if hs else float("nan")

    def to_markdown(self) -> str:
        dialects = sorted({c.dialect for c in self.cases})
        seeds = sorted({c.seed for c in self.cases})
        lines = [
            f"{len(self.faulty())} incident cases, {len(self.healthy())} healthy windows; "
            f"seeds {seeds[0]}–{seeds[-1]}; dialects {', '.join(dialects)}.",
            "",
            f"**Overall: AC@1 {self.ac(1):.3f}, AC@3 {self.ac(3):.3f}; root cause claimed on "
            f"{self.false_root_rate():.1%} of healthy windows.**",
            "",
            "| scenario | truth | AC@1 | AC@3 | "
            + " | ".join(f"AC@1 {d}" for d in dialects)
            + " |",
            "|---|---|---|---|" + "---|" * len(dialects),
        ]
        for sc in sorted({c.scenario for c in self.faulty()}):
            truth = next(c.truth for c in self.cases if c.scenario == sc)
            per = " | ".join(f"{self.ac(1, sc, d):.2f}" for d in dialects)
            lines.append(
                f"| {sc} | {', '.join(truth)} | {self.ac(1, sc):.2f} | {self.ac(3, sc):.2f} | "
                f"{per} |"
            )
        misses = [c for c in self.faulty() if not c.hit(3)]
        if misses:
            lines += ["", "Misses at AC@3 (scenario, seed, dialect → predicted):", ""]
            lines += [
                f"- {c.scenario} seed {c.seed} {c.dialect} → {', '.join(c.predicted) or 'none'}"
                for c in misses[:40]
            ]
        false = [c for c in self.healthy() if c.predicted]
        if false:
            lines += ["", "Root causes claimed on healthy windows:", ""]
            lines += [
                f"- {c.scenario} seed {c.seed} {c.dialect} → {', '.join(c.predicted)}"
                for c in false[:20]
            ]
        secs = [c.seconds for c in self.cases]
        lines += ["", f"Median time per case (canonical mapping + detect + diagnose): "
                  f"{sorted(secs)[len(secs) // 2]:.2f} s."]  # fmt: skip
        return "\n".join(lines)


def run_accuracy(
    seeds: int = 5,
    dialects: Sequence[str] | None = None,
    progress: Progress | None = None,
    scenarios: Sequence[str] | None = None,
    instances: int = 8,
    kb: KnowledgeBase | None = None,
) -> AccuracyReport:
    """Diagnose every scenario × seed × dialect; see the module docstring."""
    kb = kb or load_kb()
    names = list(scenarios) if scenarios else [s["name"] for s in list_scenarios()]
    ds = list(dialects) if dialects else list(DIALECTS)
    report = AccuracyReport()
    total = len(names) * seeds
    done = 0
    for name in names:
        for seed in range(seeds):
            res = simulate(name, hours=26, instances=instances, seed=seed, step=60.0)
            ats = [alert_time(res)] if res.truth.roots else healthy_times(res)
            for d in ds:
                store = res.raw(d)
                for at in ats:
                    t = time.perf_counter()
                    dx = diagnose(windows_at(res, d, at, store), kb=kb)
                    report.cases.append(
                        Case(
                            name,
                            seed,
                            d,
                            res.truth.roots,
                            tuple(r.hypothesis for r in dx.root_causes),
                            time.perf_counter() - t,
                        )
                    )
            done += 1
            if progress:
                progress(f"{name} seed {seed}", done / total)
    return report
