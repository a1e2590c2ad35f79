"""The scenario suite under perturbations: does a diagnosis hold when the incident is not the one
the rules were written against?

Each perturbation moves one knob of the suite's run (knobs.Variation on the simulation,
knobs.Exposure on what the monitoring holds, or the fleet's size): the fault's magnitude, the
hour of its onset, the number of instances, the scrape interval, the noise, an exporter left
undeployed, a family's marker metrics dropped or renamed by relabelling. Every case is scored
by the accuracy harness itself (`accuracy.score_run`, `AccuracyReport`): the same alert, the
same windows, the same cells left out, one report per perturbation. Runs that several
perturbations share (the suite's run read through each exposure, one 15 s run scraped every
15, 30 and 60 s) are simulated once.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field

from infersight.diagnose.kb import load_kb
from infersight.exporters import Catalog, load_catalog
from infersight.lab.evaluate.accuracy import AccuracyReport, Case, score, score_run, share_wrong
from infersight.lab.sim import SimResult, list_scenarios, simulate
from infersight.lab.sim.dialects import DEFAULT_VECTOR_DB, DIALECTS, EXPORTERS
from infersight.lab.sim.knobs import Exposure, OnsetBand, Variation
from infersight.lab.sim.scenarios import get_scenario
from infersight.sources.raw import RawStore

Progress = Callable[[str, float], None]


@dataclass(frozen=True)
class PerturbationConfig:
    #: the accuracy suite's run: 26 h (a day of history before the afternoon), 6 instances,
    #: one reading a minute, two moments of each healthy run
    hours: float = 26.0
    instances: int = 6
    step: float = 60.0
    healthy_moments: int = 2
    #: the model's step for the scrape perturbations: the finest scrape asked for, so that one
    #: run is read at every interval and only the scrape differs between them
    fine_step: float = 15.0
    magnitudes: tuple[float, ...] = (0.3, 0.5, 2.0, 3.0)
    fleet_sizes: tuple[int, ...] = (2, 64)
    scrapes: tuple[float, ...] = (15.0, 30.0, 60.0)
    noises: tuple[float, ...] = (3.0,)
    #: relabelling that renames a metric: this prefix on each marker's name
    rename_prefix: str = "relabelled_"
    #: the bar of issue 22: AC@1 at least this in every perturbation whose magnitude is at
    #: least `bar_magnitude` (a fault at 0.3× may be too small to tell from noise)
    bar_ac1: float = 0.90
    bar_magnitude: float = 0.5


#: catalog families whose marker metrics a perturbation drops, by role: the engine's and the
#: vector DB's family depend on the dialect
MARKED = ("engine", "python_runtime", "dcgm", "node", "redis", "vector_db")
ENGINE_FAMILY = {"vllm": "vllm", "triton": "triton", "tgi": "tgi", "native": "infersight"}
#: Python engines: the only dialects with prometheus_client's runtime collectors
PYTHON_DIALECTS = ("vllm", "native")


@dataclass(frozen=True)
class Perturbation:
    name: str
    group: str
    what: str
    variation: Variation = field(default_factory=Variation)
    instances: int | None = None  # None: the suite's
    step: float | None = None  # the model's step; None: the suite's
    exposure: Exposure = field(default_factory=Exposure)
    #: a role in MARKED whose family's marker metrics are dropped, or renamed with `rename`
    markers_of: str = ""
    rename: bool = False
    #: whether a healthy run reads any differently under it (a fault's magnitude: no)
    healthy: bool = True

    def sim_key(self, cfg: PerturbationConfig) -> tuple[Variation, int, float]:
        return (self.variation, self.instances or cfg.instances, self.step or cfg.step)

    def exposure_for(
        self, dialect: str, catalog: Catalog, cfg: PerturbationConfig
    ) -> Exposure | None:
        """What the monitoring holds in `dialect`; None where the perturbation changes nothing
        there (no Python runtime to leave out of TGI)."""
        if "python_runtime" in self.exposure.without and dialect not in PYTHON_DIALECTS:
            return None
        if not (self.markers_of or self.rename):
            return self.exposure
        roles = MARKED if self.rename and not self.markers_of else (self.markers_of,)
        names = sorted(n for r in roles for n in _markers(r, dialect, catalog))
        if not names:
            return None
        if self.rename:
            pairs = tuple((n, cfg.rename_prefix + n) for n in names)
            return Exposure(scrape_s=self.exposure.scrape_s, rename_metrics=pairs)
        return Exposure(scrape_s=self.exposure.scrape_s, drop_metrics=tuple(names))


def _markers(role: str, dialect: str, catalog: Catalog) -> list[str]:
    """The names that reveal the family in that role (its `detect`), as the simulator emits
    them in `dialect`."""
    if role == "python_runtime" and dialect not in PYTHON_DIALECTS:
        return []
    family = {"engine": ENGINE_FAMILY[dialect], "vector_db": DEFAULT_VECTOR_DB[dialect]}.get(
        role, role
    )
    emitted = _emitted(dialect)
    return [n for n in catalog.families[family].detect if n in emitted]


_EMITTED: dict[str, frozenset[str]] = {}


def _emitted(dialect: str) -> frozenset[str]:
    """Every metric name the simulator writes in a dialect (a short run, read once)."""
    if dialect not in _EMITTED:
        res = simulate("healthy_flat", hours=0.5, instances=1, seed=0, step=60.0)
        _EMITTED[dialect] = frozenset(res.raw(dialect).names())
    return _EMITTED[dialect]


def perturbations(cfg: PerturbationConfig | None = None) -> list[Perturbation]:
    """Every perturbation, the suite's own run first."""
    c = cfg or PerturbationConfig()
    out = [Perturbation("baseline", "baseline", "the accuracy suite's run")]
    out += [
        Perturbation(
            f"magnitude-{m:g}",
            "magnitude",
            f"fault severity ×{m:g} (faults.py: what each scales)",
            Variation(magnitude=m),
            healthy=False,
        )
        for m in c.magnitudes
    ]
    v = Variation()
    bands: tuple[tuple[OnsetBand, tuple[float, float]], ...] = (
        ("night", v.night_hours),
        ("day", v.day_hours),
    )
    out += [
        Perturbation(
            f"onset-{band}",
            "onset",
            f"onset drawn in {h[0]:02.0f}:00–{h[1]:02.0f}:00",
            Variation(onset=band),
        )
        for band, h in bands
    ]
    out += [
        Perturbation(f"instances-{n}", "instances", f"{n} instances (suite: {c.instances})", v, n)
        for n in c.fleet_sizes
    ]
    out += [
        Perturbation(
            f"scrape-{s:g}s",
            "scrape",
            f"model at {c.fine_step:g} s, scraped every {s:g} s",
            step=c.fine_step,
            exposure=Exposure(scrape_s=s),
        )
        for s in c.scrapes
    ]
    out += [
        Perturbation(
            f"noise-{k:g}", "noise", f"demand jitter and arrival noise ×{k:g}", Variation(noise=k)
        )
        for k in c.noises
    ]
    out += [
        Perturbation(
            f"without-{e}", "without", f"{e} exporter not deployed", exposure=Exposure(without=(e,))
        )
        for e in EXPORTERS
    ]
    out += [
        Perturbation(
            f"no-marker-{r}",
            "no-marker",
            f"{r} family's marker metrics dropped by relabelling",
            markers_of=r,
        )
        for r in MARKED
    ]
    out.append(
        Perturbation(
            "renamed-markers",
            "renamed",
            f"every family's marker metrics renamed `{c.rename_prefix}<name>`",
            rename=True,
        )
    )
    return out


def select(wanted: Sequence[str], cfg: PerturbationConfig | None = None) -> list[Perturbation]:
    """Perturbations by name or group (empty: all); the baseline always, for the differences."""
    every = perturbations(cfg)
    if not wanted:
        return every
    known = {p.name for p in every} | {p.group for p in every}
    unknown = [w for w in wanted if w not in known]
    if unknown:
        raise ValueError(f"unknown perturbation {unknown[0]!r}; choose from {sorted(known)}")
    return [p for p in every if p.name == "baseline" or p.name in wanted or p.group in wanted]


@dataclass
class PerturbationReport:
    perturbations: list[Perturbation]
    reports: dict[str, AccuracyReport]
    cfg: PerturbationConfig = field(default_factory=PerturbationConfig)

    def ac(self, name: str, k: int) -> float:
        return self.reports[name].ac(k)

    def below_bar(self) -> list[str]:
        """Perturbations at magnitude ≥ the bar's whose AC@1 is under the bar (nan: none)."""
        return [
            p.name
            for p in self.perturbations
            if p.variation.magnitude >= self.cfg.bar_magnitude
            and self.reports[p.name].faulty()
            and not self.ac(p.name, 1) >= self.cfg.bar_ac1
        ]

    def to_markdown(self) -> str:
        base = self.ac("baseline", 1)
        lines = [
            "| perturbation | what changes | cases | AC@1 | AC@3 | Δ AC@1 | not shown | "
            "not observable | healthy windows with a root |",
            "|---|---|---:|---:|---:|---:|---:|---:|---|",
        ]
        for p in self.perturbations:
            r = self.reports[p.name]
            ac1 = r.ac(1)
            delta = "" if p.name == "baseline" or math.isnan(ac1) else f"{ac1 - base:+.3f}"
            hs = r.healthy()
            healthy = (
                f"{sum(1 for c in hs if c.predicted)} of {len(hs)} "
                f"({share_wrong(r.false_root_rate())})"
                if hs
                else "n/a"
            )
            lines.append(
                f"| {p.name} | {p.what} | {len(r.faulty())} | {score(ac1)} | {score(r.ac(3))} "
                f"| {delta} | {len(r.not_shown())} | {len(r.unobservable())} | {healthy} |"
            )
        failing = self.below_bar()
        verdict = (
            "**met**"
            if not failing
            else "**not met** in " + ", ".join(f"{n} ({score(self.ac(n, 1))})" for n in failing)
        )
        lines += [
            "",
            f"Bar (AC@1 ≥ {self.cfg.bar_ac1:.2f} in every perturbation at magnitudes ≥ "
            f"{self.cfg.bar_magnitude:g}×): {verdict}.",
        ]
        lines += self._misses()
        return "\n".join(lines)

    def _misses(self) -> list[str]:
        out = ["", "Not first, per perturbation (scenario seed dialect → first root claimed):", ""]
        for p in self.perturbations:
            r = self.reports[p.name]
            miss = [c for c in r.faulty() if not c.hit(1)]
            false = [c for c in r.healthy() if c.predicted]
            if not miss and not false:
                continue
            parts = [f"{c.scenario} {c.seed} {c.dialect} → {_first(c)}" for c in miss]
            parts += [f"healthy {c.scenario} {c.seed} {c.dialect} → {_first(c)}" for c in false]
            out.append(f"- {p.name}: " + "; ".join(parts))
        return out


def _first(c: Case) -> str:
    return c.predicted[0] if c.predicted else "none"


def _scenario(
    name: str, seed: int, dialects: Sequence[str], wanted: Sequence[str], cfg: PerturbationConfig
) -> dict[str, list[Case]]:
    """Every wanted perturbation of one (scenario, seed): runs simulated once per knob setting,
    each read through the exposures that share it."""
    kb, catalog = load_kb(), load_catalog()
    healthy = not get_scenario(name).roots
    by_key: dict[tuple[Variation, int, float], list[Perturbation]] = {}
    for p in select(wanted, cfg):
        if p.healthy or not healthy:
            by_key.setdefault(p.sim_key(cfg), []).append(p)
    out: dict[str, list[Case]] = {}
    for (variation, instances, step), ps in by_key.items():
        res = simulate(
            name, cfg.hours, instances=instances, seed=seed, step=step, variation=variation
        )
        for p in ps:
            exposures = {d: p.exposure_for(d, catalog, cfg) for d in dialects}
            ds = [d for d, e in exposures.items() if e is not None]

            def read(
                d: str, res: SimResult = res, exposures: dict[str, Exposure | None] = exposures
            ) -> RawStore:
                return res.raw(d, exposure=exposures[d])

            out[p.name] = score_run(res, ds, cfg.healthy_moments, kb, read, p.exposure.scrape_s)
    return out


def run_perturbations(
    seeds: int = 1,
    dialects: Sequence[str] | None = None,
    scenarios: Sequence[str] | None = None,
    wanted: Sequence[str] = (),
    jobs: int = 1,
    first_seed: int = 0,
    progress: Progress | None = None,
    cfg: PerturbationConfig | None = None,
) -> PerturbationReport:
    """Every scenario × seed × dialect × wanted perturbation (empty: all); one AccuracyReport
    per perturbation."""
    c = cfg or PerturbationConfig()
    chosen = select(wanted, c)
    names = list(scenarios) if scenarios else [s["name"] for s in list_scenarios()]
    ds = list(dialects) if dialects else list(DIALECTS)
    runnable = [n for n in names if any(get_scenario(n).applies_to(d) for d in ds)]
    pairs = [(n, s) for n in runnable for s in range(first_seed, first_seed + seeds)]
    reports = {p.name: AccuracyReport() for p in chosen}
    for n in names:
        sc = get_scenario(n)
        cells = {(n, d): sc.engines_why for d in ds if not sc.applies_to(d)}
        for r in reports.values():
            r.not_applicable.update(cells)
    names_wanted = [p.name for p in chosen]

    def collect(i: int, got: dict[str, list[Case]]) -> None:
        for k, cases in got.items():
            reports[k].cases += cases
        if progress:
            n, s = pairs[i]
            progress(f"{n} seed {s}", (i + 1) / len(pairs))

    if jobs <= 1:
        for i, (n, s) in enumerate(pairs):
            collect(i, _scenario(n, s, ds, names_wanted, c))
    else:
        with ProcessPoolExecutor(jobs) as pool:
            futs = [pool.submit(_scenario, n, s, ds, names_wanted, c) for n, s in pairs]
            for i, f in enumerate(futs):
                collect(i, f.result())
    return PerturbationReport(chosen, reports, c)
