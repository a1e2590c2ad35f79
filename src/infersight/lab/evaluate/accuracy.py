"""Diagnostic accuracy over the simulator's scenario suite, read through every exporter dialect.

For each scenario × seed × dialect the run is simulated, its raw exporter metrics mapped back
to canonical signals (what a user has), windowed around the moment an alert would fire, and
diagnosed. AC@k: a true root among the top k root causes (for a compound incident, every true
root within the top max(k, number of roots)). Healthy runs are diagnosed at several moments of
the day; any root cause claimed there is a false one.

A case whose true root the engine marks *inconclusive* because signals the rule declares in
`requires` are missing in that dialect (no per-key cache loads outside native metrics) is "not
observable in this dialect": it is
reported apart, with the missing signals, and left out of AC@k rather than counted as a hit or
a miss — the right answer there is "inconclusive, signal X missing", and the report counts the
cases where the engine names that root as a possible upstream cause it could not check.
A draw in which the simulated fault never did its defining thing before the diagnosis (an OOM
cascade in which no card ran out of memory, a card throttled for one minute: the scenario's
`shows_as` signals not above zero for `shows_for` readings in a row in the simulator's own
frame) has no true root to find; it is listed apart and left out of AC@k.
A scenario whose cause cannot happen in a server of that dialect (GC pauses in a Rust or C++
server) is not run in it at all; the report lists those cells with the reason.
Each (scenario, seed) is simulated once and read through every dialect; `jobs` processes
share the (scenario, seed) pairs.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import TypeVar

from infersight.diagnose.calibrate import kind_of, raw_of
from infersight.diagnose.engine import diagnose
from infersight.diagnose.kb import KnowledgeBase, load_kb
from infersight.lab.evaluate.scenario_windows import (
    alert_time,
    fault_not_shown,
    healthy_times,
    windows_at,
)
from infersight.lab.sim import SimResult, list_scenarios, simulate
from infersight.lab.sim.dialects import DIALECTS
from infersight.lab.sim.scenarios import get_scenario
from infersight.sources.raw import RawStore

K = TypeVar("K", tuple[str, str], tuple[str, int])
Progress = Callable[[str, float], None]


@dataclass(frozen=True)
class Case:
    scenario: str
    seed: int
    dialect: str
    truth: tuple[str, ...]
    predicted: tuple[str, ...]
    seconds: float
    missing: tuple[str, ...] = ()  # signals the true root needed and the dialect lacks
    unchecked: tuple[str, ...] = ()  # causes named as "could not be checked", upstream of a root
    #: why this draw holds no trace of its fault (scenario `shows_as`); "" when it does
    not_shown: str = ""
    #: the first root's raw confidence (before calibration) and kind, for calibration
    raw_confidence: float = 0.0
    kind: str = ""  # named | indirect | unnamed (calibrate.kind_of); "" when no root was named

    @property
    def observable(self) -> bool:
        return not self.missing and not self.not_shown

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
    #: (scenario, dialect) → why the scenario's cause cannot happen in that server
    not_applicable: dict[tuple[str, str], str] = field(default_factory=dict)

    def faulty(self) -> list[Case]:
        """Incident cases whose true roots the dialect can show (the ones AC@k is over)."""
        return [c for c in self.cases if c.truth and c.observable]

    def unobservable(self) -> list[Case]:
        """Cases whose dialect lacks the signals the true root requires."""
        return [c for c in self.cases if c.truth and c.missing and not c.not_shown]

    def not_shown(self) -> list[Case]:
        """Cases whose simulated draw never produced the fault (no OOM in an OOM cascade)."""
        return [c for c in self.cases if c.truth and c.not_shown]

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
            f"{len(self.faulty())} observable incident cases ({len(self.unobservable())} more not "
            f"observable in their dialect, {len(self.not_shown())} whose draw never produced its "
            f"fault), {len(self.healthy())} healthy windows; "
            f"seeds {seeds[0]}–{seeds[-1]}; dialects {', '.join(dialects)}.",
            "",
            f"**Overall: AC@1 {score(self.ac(1))}, AC@3 {score(self.ac(3))}; root cause "
            f"claimed on {share_wrong(self.false_root_rate())} of healthy windows.**",
            "",
            "| scenario | truth | AC@1 | AC@3 | "
            + " | ".join(f"AC@1 {d}" for d in dialects)
            + " |",
            "|---|---|---|---|" + "---|" * len(dialects),
        ]
        for sc in sorted({c.scenario for c in self.cases if c.truth}):
            truth = next(c.truth for c in self.cases if c.scenario == sc)
            per = " | ".join(
                "n/a" if (sc, d) in self.not_applicable else _fmt(self.ac(1, sc, d))
                for d in dialects
            )
            lines.append(
                f"| {sc} | {', '.join(truth)} | {_fmt(self.ac(1, sc))} | {_fmt(self.ac(3, sc))} "
                f"| {per} |"
            )
        lines += self._unobservable_lines() + self._not_shown_lines()
        if self.not_applicable:
            lines += ["", "Not run (the cause cannot happen in a server of that dialect):", ""]
            lines += [
                f"- {sc} in {d}: {why}" for (sc, d), why in sorted(self.not_applicable.items())
            ]
        lines += self.misses_and_false_roots(3)
        secs = [c.seconds for c in self.cases]
        lines += ["", f"Median time per case (canonical mapping + detect + diagnose): "
                  f"{sorted(secs)[len(secs) // 2]:.2f} s."]  # fmt: skip
        return "\n".join(lines)

    def misses_and_false_roots(self, k: int) -> list[str]:
        """Markdown lists: the cases whose truth is not in the top k, the roots claimed on
        healthy windows."""
        misses = [c for c in self.faulty() if not c.hit(k)]
        false = [c for c in self.healthy() if c.predicted]
        title = "Not first" if k == 1 else f"Misses at AC@{k}"
        return _cases(f"{title} (scenario, seed, dialect → predicted):", misses[:40]) + _cases(
            "Root causes claimed on healthy windows:", false[:20]
        )

    def _unobservable_lines(self) -> list[str]:
        cells = _grouped(self.unobservable(), lambda c: (c.scenario, c.dialect))
        if not cells:
            return []
        out = [
            "",
            f"Not observable in the dialect ({len(self.unobservable())} cases, left out of "
            'AC@k; the engine answers "inconclusive" for the true root, naming the missing '
            "signals):",
            "",
            "| scenario | dialect | cases | missing signals | top root claimed instead "
            "| true root named as could-not-check cause |",
            "|---|---|---|---|---|---|",
        ]
        for (sc, d), cs in sorted(cells.items()):
            miss = sorted({m for c in cs for m in c.missing})
            claimed = _first_claimed(cs)
            named = sum(1 for c in cs if set(c.truth) <= set(c.unchecked))
            out.append(
                f"| {sc} | {d} | {len(cs)} | {', '.join(miss)} | {', '.join(claimed)} "
                f"| {named} of {len(cs)} |"
            )
        return out

    def _not_shown_lines(self) -> list[str]:
        cells = _grouped(self.not_shown(), lambda c: (c.scenario, c.seed))
        if not cells:
            return []
        out = [
            "",
            f"The draw never produced its fault by the diagnosis ({len(self.not_shown())} "
            "cases, left out of AC@k; the check reads the simulator's own frame, not the "
            "engine's answer):",
            "",
        ]
        for (sc, seed), cs in sorted(cells.items()):
            claimed = _first_claimed(cs)
            out.append(
                f"- {sc} seed {seed} ({', '.join(c.dialect for c in cs)}): {cs[0].not_shown}; "
                f"top root claimed: {', '.join(claimed)}"
            )
        return out


def _grouped(cases: list[Case], key: Callable[[Case], K]) -> dict[K, list[Case]]:
    cells: dict[K, list[Case]] = {}
    for c in cases:
        cells.setdefault(key(c), []).append(c)
    return cells


def _first_claimed(cases: list[Case]) -> list[str]:
    """The roots the engine ranked first in these cases ("none" where it named none)."""
    return sorted({c.predicted[0] for c in cases if c.predicted}) or ["none"]


def _cases(title: str, cases: list[Case]) -> list[str]:
    if not cases:
        return []
    return ["", title, ""] + [
        f"- {c.scenario} seed {c.seed} {c.dialect} → {', '.join(c.predicted) or 'none'}"
        for c in cases
    ]


def score(x: float, digits: int = 3) -> str:
    """A share of right answers, rounded down: one miss in 5,692 is 0.999, not 1.000."""
    if x != x:
        return "nan"
    return f"{math.floor(x * 10**digits + 1e-9) / 10**digits:.{digits}f}"


def share_wrong(x: float) -> str:
    """A share of wrong answers as a percentage, rounded up: one in 1,800 is 0.1%, not 0.0%."""
    if x != x:
        return "nan"
    return f"{math.ceil(x * 1000 - 1e-9) / 10:.1f}%"


def _fmt(x: float) -> str:
    return "n/o" if x != x else score(x, 2)  # nan: not observable in that dialect


def _one(
    name: str, seed: int, ds: Sequence[str], instances: int, healthy_moments: int
) -> list[Case]:
    """Every dialect of one simulated (scenario, seed)."""
    res = simulate(name, hours=26, instances=instances, seed=seed, step=60.0)
    return score_run(res, ds, healthy_moments)


def score_run(
    res: SimResult,
    ds: Sequence[str],
    healthy_moments: int = 2,
    kb: KnowledgeBase | None = None,
    read: Callable[[str], RawStore] | None = None,
    step: float | None = None,
) -> list[Case]:
    """Diagnose one simulated run through each dialect that can hold its cause, at the moment
    an on-call alert would have it looked at (or at `healthy_moments` moments of a healthy
    run): one Case each. `read(dialect)` is what a user's monitoring holds (default: every
    exporter, every step); `step` the grid it is read on (default: the run's)."""
    kb = kb or load_kb()
    name, seed = res.truth.scenario, res.truth.seed
    ats = [alert_time(res)] if res.truth.roots else healthy_times(res, healthy_moments)
    scenario = get_scenario(name)
    not_shown = fault_not_shown(res, scenario.shows_as, ats[0], scenario.shows_for)
    out = []
    for d in ds:
        if not scenario.applies_to(d):
            continue
        store = read(d) if read is not None else res.raw(d)
        for at in ats:
            t = time.perf_counter()
            dx = diagnose(windows_at(res, d, at, store, step), kb=kb)
            first = dx.root_causes[0] if dx.root_causes else None
            raw, kind = (raw_of(first), kind_of(first)) if first is not None else (0.0, "")
            missing: list[str] = []
            for root in res.truth.roots:
                h, rule = dx.hypothesis(root), kb.get(root)
                # only a rule's declared `requires` make a case "not observable": any other
                # inconclusive verdict on the true root is a miss
                if h is None or rule is None or not rule.requires:
                    continue
                if h.verdict == "inconclusive":
                    missing += rule.unobservable(h.missing_signals)
            out.append(
                Case(
                    name,
                    seed,
                    d,
                    res.truth.roots,
                    tuple(r.hypothesis for r in dx.root_causes),
                    time.perf_counter() - t,
                    tuple(sorted(set(missing))),
                    tuple(u.hypothesis for u in dx.unchecked_causes),
                    not_shown,
                    raw,
                    kind,
                )
            )
    return out


def run_accuracy(
    seeds: int = 5,
    dialects: Sequence[str] | None = None,
    progress: Progress | None = None,
    scenarios: Sequence[str] | None = None,
    instances: int = 6,
    healthy_moments: int = 2,
    jobs: int = 1,
    first_seed: int = 0,
) -> AccuracyReport:
    """Diagnose every scenario × seed (first_seed … first_seed + seeds - 1) × dialect; see the
    module docstring."""
    names = list(scenarios) if scenarios else [s["name"] for s in list_scenarios()]
    ds = list(dialects) if dialects else list(DIALECTS)
    runnable = [n for n in names if any(get_scenario(n).applies_to(d) for d in ds)]
    pairs = [(n, seed) for n in runnable for seed in range(first_seed, first_seed + seeds)]
    report = AccuracyReport()
    for n in names:
        sc = get_scenario(n)
        report.not_applicable.update({(n, d): sc.engines_why for d in ds if not sc.applies_to(d)})
    if jobs <= 1:
        for i, (n, seed) in enumerate(pairs):
            report.cases += _one(n, seed, ds, instances, healthy_moments)
            if progress:
                progress(f"{n} seed {seed}", (i + 1) / len(pairs))
        return report
    with ProcessPoolExecutor(jobs) as pool:
        futs = [pool.submit(_one, n, seed, ds, instances, healthy_moments) for n, seed in pairs]
        for i, ((n, seed), f) in enumerate(zip(pairs, futs, strict=True)):
            report.cases += f.result()
            if progress:
                progress(f"{n} seed {seed}", (i + 1) / len(pairs))
    return report
