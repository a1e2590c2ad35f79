"""Leave one rule out: the closest the project has to an incident nobody described.

For each cause rule R, R is taken out of the knowledge base and every case whose truth is R
is diagnosed again: the simulator's scenarios (each seed through each dialect that can hold
it), the live lab's frozen bundles and the request-path frames of `tests/diagnose/`. With no
rule to name the mechanism, the answer should still be the right place: the request-path walk
ends at R's part on the instances the fault touched, and says what changed there. Three
figures per case:

* `right_node`: a root (for a compound incident, any; else the first) sits at a node of R's
  `at` parts on the truth's instances;
* `signal_in_three`: that root is a change no rule names, and one of R's `signals` (the
  changes that name its mechanism) is among its first three pieces of evidence;
* `other_first`: the first root is another rule, not one of the case's other true roots,
  named at a confidence of 0.5 or more (confidently wrong).

Every diagnosis is also kept as a (confidence, right) pair for calibration
(`lab/evaluate/calibration.py`): with R in, right is R (or another true root) first; with R
out, right is the first root at R's node.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from infersight.bundle import read_bundle
from infersight.diagnose import diagnose
from infersight.diagnose.kb import KnowledgeBase, Rule, load_kb
from infersight.diagnose.result import Diagnosis, RootCause
from infersight.frame import MetricFrame
from infersight.lab.evaluate.path_cases import SHORTHANDS, Case, load_cases
from infersight.lab.evaluate.scenario_windows import alert_time, windows_at
from infersight.lab.sim import SimResult, list_scenarios, simulate
from infersight.lab.sim.dialects import DIALECTS
from infersight.lab.sim.scenarios import get_scenario

Windows = Mapping[str, MetricFrame]
Progress = Callable[[str, float], None]
#: an incident's windows, and the instances its fault touched (none known: R's own finding's)
Loader = Callable[[], tuple[Windows, tuple[str, ...]]]


@dataclass(frozen=True)
class Incident:
    """One case whose truth names `rule`: where it comes from, how to load it, and the other
    true roots of a compound incident."""

    rule: str
    source: str  # sim | lab | case
    label: str
    load: Loader
    others: tuple[str, ...] = ()


@dataclass(frozen=True)
class Outcome:
    rule: str
    source: str
    label: str
    right_node: bool
    signal_in_three: bool
    other_first: bool
    top: str
    top_confidence: float
    top_node: str


@dataclass
class Pair:
    """One diagnosis's first root: its confidence and whether it was right."""

    confidence: float
    right: bool
    source: str


@dataclass
class Run:
    outcomes: list[Outcome] = field(default_factory=list)
    pairs: list[Pair] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


def without(kb: KnowledgeBase, rule: str) -> KnowledgeBase:
    rules = tuple(r for r in kb.rules if r.id != rule)
    return KnowledgeBase(rules, {r.id: kb.origins.get(r.id, "") for r in rules})


def truth_nodes(rule: Rule, instances: Iterable[str]) -> Callable[[str], bool]:
    """Whether a node (`part:instance`, `hop`) is one of R's parts on the truth's instances."""
    insts = set(instances)
    parts = set(rule.at)

    def match(node: str) -> bool:
        part, _, inst = node.partition(":")
        if node == "hop":
            return "hop" in parts
        return inst in insts and (part in parts or "instance" in parts)

    return match


def _at_node(dx: Diagnosis, match: Callable[[str], bool], compound: bool) -> RootCause | None:
    roots = dx.root_causes if compound else dx.root_causes[:1]
    return next((r for r in roots if any(match(n) for n in r.nodes or (r.node,))), None)


def score(inc: Incident, rule: Rule, dx: Diagnosis, instances: Sequence[str]) -> Outcome:
    match = truth_nodes(rule, instances)
    hit = _at_node(dx, match, bool(inc.others))
    first = dx.root_causes[0] if dx.root_causes else None
    in_three = False
    if hit is not None and hit.unnamed:
        h = dx.hypothesis(hit.hypothesis)
        top3 = [e.signal for e in (h.evidence if h is not None else ())][:3]
        in_three = bool(set(rule.signals) & set(top3))
    other = (
        first is not None
        and not first.unnamed
        and first.hypothesis not in inc.others
        and first.confidence >= 0.5
    )
    return Outcome(
        inc.rule,
        inc.source,
        inc.label,
        hit is not None,
        in_three,
        other,
        first.hypothesis if first else "",
        first.confidence if first else 0.0,
        first.node if first else "",
    )


def sim_incidents(
    seeds: int, dialects: Sequence[str] | None = None, instances: int = 6
) -> list[Incident]:
    """Every scenario with a root, each seed through each dialect that can hold it; each run
    simulated once, when first loaded."""
    ds = list(dialects) if dialects else list(DIALECTS)
    out: list[Incident] = []
    for spec in list_scenarios():
        sc = get_scenario(spec["name"])
        if not sc.roots:
            continue
        for seed in range(seeds):
            res = _Simulated(sc.name, seed, instances)
            for d in ds:
                if not sc.applies_to(d):
                    continue
                for root in sc.roots:
                    others = tuple(r for r in sc.roots if r != root)
                    label = f"{sc.name} seed {seed} {d}"
                    out.append(Incident(root, "sim", label, res.loader(d), others))
    return out


class _Simulated:
    """One simulated run, made when first asked and kept for its other dialects."""

    def __init__(self, name: str, seed: int, instances: int) -> None:
        self.args = (name, seed, instances)
        self.res: SimResult | None = None

    def loader(self, dialect: str) -> Loader:
        def load() -> tuple[Windows, tuple[str, ...]]:
            if self.res is None:
                name, seed, instances = self.args
                self.res = simulate(name, hours=26, instances=instances, seed=seed, step=60.0)
            res = self.res
            return windows_at(res, dialect, alert_time(res)), res.truth.instances

        return load


def lab_incidents(folder: Path, expected: Mapping[str, Sequence[str]]) -> list[Incident]:
    """The live lab's frozen bundles, each for its fault's root cause (the first expected)."""
    out = []
    for path in sorted(folder.glob("*.tar.gz")):
        name = path.name.removesuffix(".tar.gz")
        if expected.get(name):
            out.append(Incident(expected[name][0], "lab", name, _bundle(path)))
    return out


def _bundle(path: Path) -> Loader:
    return lambda: (dict(read_bundle(path).windows), ())


def case_incidents(folders: Iterable[Path]) -> list[Incident]:
    """The request-path frames (rule cases, the walk's cases) whose top root is named."""
    out = []
    for folder in folders:
        for case in load_cases(folder):
            root = case.expect.get("root")
            if root:
                others = tuple(r for r in case.expect.get("roots_include", ()) if r != root)
                out.append(Incident(str(root), "case", case.name, _case(case), others))
    return out


def _case(case: Case) -> Loader:
    insts = tuple(n for i in case.expect.get("instances", ()) for n in SHORTHANDS.get(i, (i,)))
    return lambda: (case.windows(), insts)


def run(
    incidents: Sequence[Incident],
    kb: KnowledgeBase | None = None,
    progress: Progress | None = None,
) -> Run:
    """Diagnose each incident with every rule, then without its rule; score the second."""
    kb = kb or load_kb()
    out = Run()
    for i, inc in enumerate(incidents):
        rule = kb.get(inc.rule)
        if rule is None or rule.kind != "cause":
            out.skipped.append(f"{inc.label}: {inc.rule} is not a cause of the knowledge base")
            continue
        if progress:
            progress(f"{inc.rule}: {inc.label}", i / max(len(incidents), 1))
        wins, known = inc.load()
        full = diagnose(wins, kb=kb)
        instances = known or _found(full, inc.rule)
        first = full.root_causes[0] if full.root_causes else None
        if first is not None:
            truths = {inc.rule, *inc.others}
            out.pairs.append(Pair(first.confidence, first.hypothesis in truths, inc.source))
        if not instances:
            out.skipped.append(f"{inc.label}: {inc.rule} found nowhere to place the truth")
            continue
        dx = diagnose(wins, kb=without(kb, inc.rule))
        outcome = score(inc, rule, dx, instances)
        out.outcomes.append(outcome)
        if dx.root_causes:
            top = dx.root_causes[0]
            right = (outcome.right_node and top.unnamed) or top.hypothesis in inc.others
            out.pairs.append(Pair(top.confidence, right, "loo"))
    return out


def _found(dx: Diagnosis, rule: str) -> tuple[str, ...]:
    h = dx.hypothesis(rule)
    return h.instances if h is not None and h.verdict == "confirmed" else ()
