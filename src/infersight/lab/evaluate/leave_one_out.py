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

Every diagnosis is also kept as a (raw confidence, kind, right) pair for calibration
(`lab/evaluate/calibration.py`): with R in (source: the case's own), right is R (or another
true root) first; with R out (source `loo`), right is the first root at R's node, a change no
rule names there or another true root. `other_first` reads the confidence users see (the
calibrated one).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from infersight.bundle import read_bundle
from infersight.diagnose import diagnose
from infersight.diagnose.calibrate import Kind, kind_of, raw_of
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


class LeaveOneOutConfig(BaseModel):
    """The benchmark's constants: the issue's bars, with their reasons."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    #: another rule named first at this (calibrated) confidence or more is confidently wrong;
    #: below it, an answer a reader takes as a guess
    other_confidence: float = 0.5
    #: with no rule for the mechanism, the walk still ends at the right place nine times in ten
    bar_right_node: float = 0.90
    #: and says what changed there: the rule's own signal among the first three, four in five
    bar_signal: float = 0.80
    #: a neighbour named instead, confidently, at most one time in ten
    bar_other_first: float = 0.10


@dataclass(frozen=True)
class Incident:
    """One case whose truth names `rule`: where it comes from, how to load it, and the other
    true roots of a compound incident."""

    rule: str
    source: str  # sim | lab | case
    label: str
    load: Loader
    others: tuple[str, ...] = ()
    #: what the case shares data with (a simulator seed, a bundle, a case file): calibration
    #: never fits and tests on one group
    group: str = ""


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


@dataclass(frozen=True)
class Pair:
    """One diagnosis's first root: its raw confidence (before calibration), its kind, whether
    it was right, where the case came from and the group of cases it shares data with."""

    confidence: float
    right: bool
    source: str
    kind: Kind = "named"
    group: str = ""

    @classmethod
    def of(cls, root: RootCause, right: bool, source: str, group: str) -> Pair:
        return cls(raw_of(root), right, source, kind_of(root), group)


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


def score(
    inc: Incident,
    rule: Rule,
    dx: Diagnosis,
    instances: Sequence[str],
    cfg: LeaveOneOutConfig | None = None,
) -> Outcome:
    c = cfg or LeaveOneOutConfig()
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
        and first.confidence >= c.other_confidence
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
    seeds: int,
    dialects: Sequence[str] | None = None,
    instances: int = 6,
    first_seed: int = 0,
    scenarios: Sequence[str] | None = None,
) -> list[Incident]:
    """Every scenario with a root (or those named), seeds first_seed … first_seed + seeds - 1,
    each through each dialect that can hold it; each run simulated once, when first loaded."""
    ds = list(dialects) if dialects else list(DIALECTS)
    names = list(scenarios) if scenarios else [s["name"] for s in list_scenarios()]
    out: list[Incident] = []
    for name in names:
        sc = get_scenario(name)
        if not sc.roots:
            continue
        for seed in range(first_seed, first_seed + seeds):
            res = _Simulated(sc.name, seed, instances)
            for d in ds:
                if not sc.applies_to(d):
                    continue
                for root in sc.roots:
                    others = tuple(r for r in sc.roots if r != root)
                    label = f"{sc.name} seed {seed} {d}"
                    inc = Incident(root, "sim", label, res.loader(d), others, f"seed {seed}")
                    out.append(inc)
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
            out.append(Incident(expected[name][0], "lab", name, _bundle(path), group=f"lab {name}"))
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
                inc = Incident(
                    str(root), "case", case.name, _case(case), others, f"case {case.rule}"
                )
                out.append(inc)
    return out


def _case(case: Case) -> Loader:
    insts = tuple(n for i in case.expect.get("instances", ()) for n in SHORTHANDS.get(i, (i,)))
    return lambda: (case.windows(), insts)


def gather(
    seeds: int = 0,
    first_seed: int = 0,
    dialects: Sequence[str] | None = None,
    scenarios: Sequence[str] | None = None,
    lab: tuple[Path, Mapping[str, Sequence[str]]] | None = None,
    case_folders: Sequence[Path] = (),
    rules: Sequence[str] = (),
) -> list[Incident]:
    """Every case of every source asked for (no seeds: no simulator; `lab`: the bundles'
    folder and each fault's expected answers), only those of `rules` when named."""
    out = (
        sim_incidents(seeds, dialects, first_seed=first_seed, scenarios=scenarios) if seeds else []
    )
    if lab is not None:
        out += lab_incidents(*lab)
    out += case_incidents(case_folders)
    return [i for i in out if not rules or i.rule in rules]


def run(
    incidents: Sequence[Incident],
    kb: KnowledgeBase | None = None,
    progress: Progress | None = None,
    cfg: LeaveOneOutConfig | None = None,
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
            out.pairs.append(Pair.of(first, first.hypothesis in truths, inc.source, inc.group))
        if not instances:
            out.skipped.append(f"{inc.label}: {inc.rule} found nowhere to place the truth")
            continue
        dx = diagnose(wins, kb=without(kb, inc.rule))
        outcome = score(inc, rule, dx, instances, cfg)
        out.outcomes.append(outcome)
        if dx.root_causes:
            top = dx.root_causes[0]
            right = (outcome.right_node and top.unnamed) or top.hypothesis in inc.others
            out.pairs.append(Pair.of(top, right, "loo", inc.group))
    return out


def _found(dx: Diagnosis, rule: str) -> tuple[str, ...]:
    h = dx.hypothesis(rule)
    return h.instances if h is not None and h.verdict == "confirmed" else ()


def _share(k: int, n: int) -> str:
    return f"{k} of {n} ({k / n:.0%})" if n else "none"


def to_markdown(r: Run, cfg: LeaveOneOutConfig | None = None) -> str:
    """The totals against the bars, one row per rule, the cases off the right node, the
    cases left out."""
    c = cfg or LeaveOneOutConfig()
    out, n = r.outcomes, len(r.outcomes)
    if not n:
        return "No case was scored.\n" + "".join(f"\n- {s}" for s in r.skipped)
    node = sum(o.right_node for o in out)
    sig = sum(o.signal_in_three for o in out)
    other = sum(o.other_first for o in out)
    bars = (
        ("the walk ends at the right node", node, c.bar_right_node, True),
        ("the rule's signal among the unnamed root's first three", sig, c.bar_signal, True),
        (
            f"another rule named first at {c.other_confidence:.0%} or more",
            other,
            c.bar_other_first,
            False,
        ),
    )
    sources = ", ".join(
        f"{sum(1 for o in out if o.source == s)} {s}"
        for s in ("sim", "lab", "case")
        if any(o.source == s for o in out)
    )
    lines = [f"{n} cases over {len({o.rule for o in out})} rules ({sources}).", ""]
    for what, k, bar, floor in bars:
        met = k / n >= bar if floor else k / n <= bar
        sign = "≥" if floor else "≤"
        lines.append(
            f"- {what}: **{_share(k, n)}** (bar {sign} {bar:.0%}: {'met' if met else 'not met'})"
        )
    lines += [
        "",
        "| rule | cases | right node | signal in three | other first |",
        "|---|---:|---:|---:|---:|",
    ]
    for rule in sorted({o.rule for o in out}):
        mine = [o for o in out if o.rule == rule]
        k = len(mine)
        lines.append(
            f"| {rule} | {k} | {sum(o.right_node for o in mine)} "
            f"| {sum(o.signal_in_three for o in mine)} | {sum(o.other_first for o in mine)} |"
        )
    off = [o for o in out if not o.right_node or o.other_first]
    if off:
        lines += ["", "Off the right node, or another rule named first (case → first root):", ""]
        lines += [
            f"- {o.rule} · {o.label} → {o.top or 'none'} at {o.top_node or '(no node)'} "
            f"({o.top_confidence:.2f})"
            for o in off
        ]
    if r.skipped:
        lines += ["", "Left out:", ""] + [f"- {s}" for s in r.skipped]
    return "\n".join(lines)
