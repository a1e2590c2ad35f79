"""The knowledge base: one hypothesis per YAML file, validated on load.

A rule names the signals it reads, the evidence that confirms it and the evidence that refutes
it, as conditions on signal states (see `Condition`), and what it explains: other hypotheses or
symptoms. Users add rules by pointing `load_kb` at folders of their own YAML files; a file with
the id of a built-in rule replaces it. Errors name the file and the field.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from infersight.diagnose.rule_files import RuleFileError, read_rule_file
from infersight.signals import Layer, all_signals
from infersight.yamltext import parse_yaml

#: a condition kind's state; the kinds are the modules of `diagnose/states/` (its registry)
State = str
#: the capacity states compare this configured limit with what the card holds
CAPACITY_SIGNAL = "service.concurrency_limit"
#: `outage` reads a target's `up`
UP_SIGNAL = "infra.target_up"
Where = Literal["any", "same", "other"]
When = Literal["any", "together", "after", "during"]
#: a cause can be a root; a symptom is what users feel, never a root; a forecast is a symptom
#: still to come (a card full within a day): never a root, but the walk starts from it as
#: from what the users feel, so that what grows is named
Kind = Literal["cause", "symptom", "forecast"]
PathPart = Literal[
    "gateway", "hop", "service", "engine", "gpu", "host", "cache", "retrieval", "instance"
]

LAYER_ORDER: tuple[str, ...] = tuple(layer.value for layer in Layer)


class KBError(ValueError):
    """A rule file that cannot be used; the message names the file and the field."""


class Condition(BaseModel):
    """One signal state. `up`/`down`: deviation from baseline (ratio at least `factor`, change at
    least `delta`, its way, over the whole excursion or, where that began more than `peak_lead_s`
    (`DiagnoseConfig`) before the onset, on its median since the incident began; dated by its first
    reading that far from the baseline, not by when it left the band: a rate creeping up a morning
    ramp before a surge tripled it dates the surge; of an excursion that ended 15 min or more before
    the onset and came back, the later one; a size only the incident's readings reach, from
    `peak_lead_s` before the onset on);
    `above`/`below`: the level since the incident began passes `level`;
    `stat: max`/`min` reads above/below on the extreme since the incident began instead of the
    median (VRAM's peak, not its steady level: seed §3.2), and makes `up`/`down` compare that
    extreme with the extreme before the incident (by `factor`, default 2; both split
    `peak_lead_s` ahead of the onset, as a cause's first readings precede the users' symptom):
    a burst too short for a sustained deviation; peaks are read away from restarts
    (`Context.settled_row`);
    `normal`: present and not anomalous; `trend_up`/`trend_down`: a sustained slope, within
    the window or across the baselines (a slow climb since yesterday); with `level`, one that
    runs out (full, or empty) within `level` seconds at its pace;
    `outlier`: away from its peers (`direction` up/down, default the bad one); `absent`: the
    series stopped or the target is down; `event`: its highest value from 30 min before the
    onset on (a cause begins before users notice) exceeds `level` (default 0) and everything
    earlier.
    `over_capacity` / `within_capacity` (on `service.concurrency_limit` only, seed §3.3): the
    configured limit against the number of requests the card holds, V/M, estimated per instance
    from the window itself — M the VRAM per in-flight request (Theil–Sen slope of
    `inference.gpu_mem_used_bytes` on in-flight work: `inference.running_requests`, else
    `service.threadpool_busy_ratio` × the limit), V the share `level` (default 1.0: the whole
    card; card = bytes used / `inference.gpu_mem_used_ratio`) less the fitted intercept (weights,
    runtime). `over_capacity` holds where the limit exceeds `factor` (default 2) × V/M,
    `within_capacity` where it does not; unknown where those inputs are missing or too flat to
    fit.
    `outage` (on `infra.target_up` only, seed §4.3): the target was down (`up` 0) for at least
    `level` seconds and came back since the incident began — a restart that took that long to
    serve again (a model loading from remote storage); a target that stays down is `absent`.
    `rose` / `fell` (with `factor`; `where: same` or `min_share` ≥ 0.5): the median since the
    onset is at least `factor` × (at most 1/`factor` ×) the median before it, and the shift is
    larger than the noise before it. On the instances another condition already pinned it reads
    a change smaller than detection's floors (a 40% deviation), to tell whether the users felt
    it (latency up 30% on the hosts whose disk filled with log writes); across half the fleet
    or more it is a step at the onset in its own right (a surge on top of a morning ramp that
    the window's own level already holds).
    `outpaces` (with `than` and `factor`, only `where: same`): on the instances another
    condition pinned, the signal is worse than its peers' (median since the onset, the signal's
    bad direction) by at least `factor` times as much as `than` is worse than its peers' — a
    change larger than the one offered as its cause can make (batches 1.6× slower than the
    fleet's on a card whose clock is 1.5% below theirs: the clock did not slow them); it
    does not hold where either signal or two peers are missing. With `stat: max` it compares
    each with its own past instead: the signal's peak since the onset grew at least `factor`
    times as much (peak since over peak before, read away from restarts) as `than`'s did (a
    pass 2.5× slower at its worst while the mean batch peaked 1.3× higher: each item costs
    more, so the batches went past the knee). With `per` (peer form): the signal is read per
    unit of that signal first (a pass's time per request in its batch): a card that fell
    behind runs larger batches, and a larger batch takes longer whatever the clock did.
    `adds` (with `than` and `factor`): a client-timed latency (`measured_at: client`) grew, from
    its median before the onset to its median since, by at least `factor` times the most the
    server-timed `than` grew on any instance: the rest was added between client and server, on
    the wire or in a hop without metrics; unknown where `than` is missing.

    where: `any` instance carrying the signal, the `same` instances the enclosing group's first
    condition matched, or the `other` instances (not those). `min_share`: the share of the
    instances carrying the signal on which it must hold (1 instance of 10 is an outlier; 6 of
    10 is the fleet); `max_share`: at most this share (a leak on one instance, not a fleet-wide
    ramp with load); one instance among two or more always passes it, since a single machine
    is the smallest part of a fleet there is (one of two is half of it).
    when: `together` (with `where: same`, on a state that dates its own change: up, down,
    outlier, absent, event, outage, above/below with `stat`): on each instance the change began
    within `together_s` of a change the first matched member of the enclosing `all` group (of
    the outer one, for a group nested in an `all`) found there, any of its alternatives (a
    second process brings its memory and its slowdown at once; a slowdown an hour before the
    memory rose is another story); `any` (default): no constraint. An anchor without a date
    of its own (a slope) does not constrain; a median level is dated by the incident onset.
    The change began at its earliest sign on any signal the `together` alternatives of its
    `any` group read (the mean batch time above its peers' since 12:02 dates a tail that
    only moved at 14:31).
    `after` (the same states and `where: same` as `together`): on each instance the change
    began no earlier than the anchor's there, less one grid step: an effect does not start
    before its cause (a replica the OOM crashed restarts after its memory filled; one that
    restarted for a deploy fills its memory again after). An anchor there before the window
    does not constrain.
    `during` (on a median `above`/`below`, or `rose`/`fell`): where the change the enclosing
    `all` group's first matched member found on that instance (dated by the first of its
    alternatives that held there) began after the incident's onset, the level is read since
    that change began: GPUs saturated while the surge lasts, however early a precursor (a
    tail flapping across a histogram bucket bound) dated the incident. Elsewhere (an anchor
    that began earlier, a morning ramp; an instance it did not find) it is read since the
    onset.
    A shift read so compares the time since that change with the time before it: did the
    requests slow when the disk got busy, whatever else dated the incident.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    signal: str
    state: State
    factor: float | None = Field(None, gt=1.0)
    delta: float | None = Field(None, gt=0.0)
    level: float | None = None
    direction: Literal["up", "down"] | None = None
    stat: Literal["median", "max", "min"] = "median"
    where: Where = "any"
    when: When = "any"
    min_share: float = Field(0.0, ge=0.0, le=1.0)
    max_share: float = Field(1.0, ge=0.0, le=1.0)
    than: str | None = None
    per: str | None = None
    note: str = ""

    @model_validator(mode="after")
    def _check(self) -> Condition:
        if self.signal not in all_signals():
            raise ValueError(f"unknown signal {self.signal!r}")
        # imported here: the kinds' modules read conditions, so they import this module
        from infersight.diagnose.states import registry

        problem = registry.check(self)
        if problem is not None:
            raise ValueError(problem)
        used = {
            "factor": self.factor is not None,
            "delta": self.delta is not None,
            "level": self.level is not None,
            "direction": self.direction is not None,
            "than": self.than is not None,
            "per": self.per is not None,
            "stat": self.stat != "median",
            "together": self.when in ("together", "after"),
            "during": self.when == "during",
        }
        for option, on in used.items():
            if on and option not in registry.accepts(self.state):
                raise ValueError(_not_taken(option, self.state, registry.taking(option)))
        if self.when in ("together", "after") and self.where != "same":
            raise ValueError(_not_taken("together", self.state, registry.taking("together")))
        if self.than is not None and self.than not in all_signals():
            raise ValueError(f"unknown signal {self.than!r} in `than`")
        if self.per is not None and self.per not in all_signals():
            raise ValueError(f"unknown signal {self.per!r} in `per`")
        return self


_OPTION_WORDS = {
    "factor": "factor",
    "delta": "delta",
    "level": "level",
    "direction": "direction",
    "than": "`than`",
    "per": "`per`",
    "stat": "stat: max/min",
    "together": "when: together",
    "during": "when: during",
}


def _not_taken(option: str, state: str, takers: list[str]) -> str:
    """Why a condition's option does not apply to its state, naming the states it applies to."""
    names = ", ".join(repr(t) for t in takers)
    if option == "together":
        return (
            "when: together needs where: same and a state that dates its change "
            f"({names}; above/below only with stat), not {state!r}"
        )
    if option == "during":
        return f"when: during applies to a median level ({names}), not {state!r}"
    word = "state" if len(takers) == 1 else "states"
    return f"{_OPTION_WORDS[option]} applies to {word} {names}, not {state!r}"


class Group(BaseModel):
    """`all:` every member holds; `any:` at least one does. Members nest."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    all: list[Condition | Group] | None = None
    any: list[Condition | Group] | None = None

    @model_validator(mode="after")
    def _one(self) -> Group:
        if (self.all is None) == (self.any is None):
            raise ValueError("a group has exactly one of `all` or `any`")
        if not (self.all or self.any):
            raise ValueError("a group needs at least one member")
        return self

    @property
    def members(self) -> list[Condition | Group]:
        return list(self.all if self.all is not None else self.any or [])

    @property
    def mode(self) -> Literal["all", "any"]:
        return "all" if self.all is not None else "any"


class Rule(BaseModel):
    """One hypothesis (kind cause), symptom (never a root cause) or forecast (a symptom to
    come: never a root, a start of the walk)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    kind: Kind = "cause"
    layer: Literal["access", "service", "inference", "dependency", "infrastructure"]
    title: str
    seed: str
    #: where on the request path the mechanism sits (the parts of `signals.yaml`, `hop` for
    #: the API without metrics, `instance` for any part of the instances it names): the
    #: request-path walk's ends it may name (`diagnose/roots.py`)
    at: list[PathPart] = Field(default_factory=list)
    #: a limit (or its absence) that only shows under more work: where the walk's work piled
    #: up at its part, it is named beside what sent the work, first (the fix is the limit)
    under_load: bool = False
    #: it takes replicas out of service (down, out of rotation, restarting): their share of
    #: the work is on their peers meanwhile, and a remedy on the peers says so first
    #: (`diagnose/carrying.py`, seed §2.3)
    takes_out: bool = False
    description: str = ""
    #: the changes that name the mechanism, what sets it apart from its neighbours (not the
    #: symptoms it shares with them): what a change at its part no rule names is compared with
    signals: list[str] = Field(default_factory=list)
    #: what the rule cannot be decided without: each entry a signal or alternatives "a | b";
    #: empty: every signal its conditions read (see `unobservable`)
    requires: list[str] = Field(default_factory=list)
    confirm: Group
    refute: Group | None = None
    explains: list[str] = Field(default_factory=list)
    remedy: str = ""
    runbook: str | None = None
    checks: dict[str, str] = Field(default_factory=dict)  # signal → how to make it available

    @model_validator(mode="after")
    def _signals(self) -> Rule:
        known = all_signals()
        for s in [*self.signals, *self.checks, *(a for r in self.requires for a in _alts(r))]:
            if s not in known:
                raise ValueError(f"unknown signal {s!r}")
        return self

    def needs(self) -> list[tuple[str, ...]]:
        """What the rule cannot be decided without, each entry as alternatives: its `requires`,
        and, where its confirm is one `all`, each prediction that is never a gap
        (`conditions.py`): the anchor, and any that says something stays put. Without one of
        such a prediction's signals the rule cannot be confirmed, so it is as required as what
        the rule declares."""
        out = [tuple(_alts(e)) for e in self.requires]
        if self.confirm.mode == "all":
            for i, m in enumerate(self.confirm.members):
                conds = [m] if isinstance(m, Condition) else list(walk(m))
                if i == 0 or any(c.state == "normal" for c in conds):
                    alts = tuple(dict.fromkeys(c.signal for c in conds))
                    if alts not in out:
                        out.append(alts)
        return out

    def unobservable(self, missing: Iterable[str]) -> list[str]:
        """Of the signals an inconclusive verdict names as missing, those that make the rule
        undecidable: an entry of `needs` none of whose alternatives the data has. A rule left
        inconclusive only because an alternative signal is missing is decidable (a miss, not
        "not observable"). Without `requires`, every missing signal counts."""
        gone = list(dict.fromkeys(missing))
        if not self.requires:
            return gone
        out: dict[str, None] = {}
        for alts in self.needs():
            if all(a in gone for a in alts):
                out.update(dict.fromkeys(alts))
        return list(out)

    def condition_signals(self) -> list[str]:
        """Every signal the rule reads: its signature, and each condition's own, `than` and
        `per` included."""
        out: dict[str, None] = dict.fromkeys(self.signals)
        for g in (self.confirm, self.refute):
            if g is not None:
                for c in walk(g):
                    out.update(dict.fromkeys(s for s in (c.signal, c.than, c.per) if s))
        return list(out)


Group.model_rebuild()


def _alts(entry: str) -> list[str]:
    return [a.strip() for a in entry.split("|") if a.strip()]


def walk(group: Group) -> Iterator[Condition]:
    for m in group.members:
        if isinstance(m, Condition):
            yield m
        else:
            yield from walk(m)


@dataclass(frozen=True)
class KnowledgeBase:
    rules: tuple[Rule, ...]
    origins: dict[str, str]  # rule id → file it came from

    def get(self, rid: str) -> Rule | None:
        return next((r for r in self.rules if r.id == rid), None)

    @property
    def ids(self) -> set[str]:
        return {r.id for r in self.rules}

    def in_layer_order(self) -> list[Rule]:
        return sorted(self.rules, key=lambda r: (LAYER_ORDER.index(r.layer), r.kind, r.id))


def _loc(err: ValidationError) -> str:
    parts = []
    for e in err.errors():
        loc = ".".join(str(p) for p in e["loc"]) or "(top)"
        parts.append(f"{loc}: {e['msg']}")
    return "; ".join(parts)


def parse_rule(text: str, origin: str) -> Rule:
    """One rule from YAML text; KBError names `origin` and the failing field."""
    try:
        raw = parse_yaml(text)
    except yaml.YAMLError as exc:
        why = " ".join(str(exc).split())  # PyYAML's mark spans lines: one line to print
        raise KBError(f"{origin}: not valid YAML: {why}") from None
    if not isinstance(raw, dict):
        raise KBError(f"{origin}: a rule file holds one mapping (id, layer, title, confirm, …)")
    try:
        return Rule.model_validate(raw)
    except ValidationError as exc:
        raise KBError(f"{origin}: {_loc(exc)}") from None


def _builtin_texts() -> list[tuple[str, str]]:
    root = resources.files("infersight.diagnose").joinpath("rules")
    out = []
    for entry in sorted(root.iterdir(), key=lambda p: p.name):
        if entry.name.endswith((".yaml", ".yml")):
            out.append((f"rules/{entry.name}", entry.read_text("utf-8")))
    return out


@cache
def _builtin() -> tuple[tuple[Rule, str], ...]:
    return tuple((parse_rule(text, origin), origin) for origin, text in _builtin_texts())


def _check_links(rules: dict[str, Rule], origins: dict[str, str]) -> None:
    for r in rules.values():
        for target in r.explains:
            if target not in rules:
                raise KBError(
                    f"{origins[r.id]}: explains: unknown hypothesis or symptom {target!r}"
                )
            if target == r.id:
                raise KBError(f"{origins[r.id]}: explains: a rule cannot explain itself")


def load_kb(extra_dirs: Iterable[Path | str] = ()) -> KnowledgeBase:
    """The built-in rules plus every *.yaml in `extra_dirs` (later files replace earlier ids)."""
    rules: dict[str, Rule] = {}
    origins: dict[str, str] = {}
    for rule, origin in _builtin():
        rules[rule.id], origins[rule.id] = rule, origin
    for d in extra_dirs:
        path = Path(d)
        if not path.is_dir():
            raise KBError(f"{path}: not a folder of rule files")
        for f in sorted([*path.glob("*.yaml"), *path.glob("*.yml")]):
            try:
                text = read_rule_file(f)
            except RuleFileError as exc:
                raise KBError(str(exc)) from None
            rule = parse_rule(text, str(f))
            rules[rule.id], origins[rule.id] = rule, str(f)
    _check_links(rules, origins)
    ordered = sorted(rules.values(), key=lambda r: (LAYER_ORDER.index(r.layer), r.id))
    return KnowledgeBase(tuple(ordered), origins)
