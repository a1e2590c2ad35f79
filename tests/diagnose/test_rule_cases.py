"""Every rule's test cases, as data: `cases/<rule_id>.yaml`, one file per rule of the built-in
knowledge base, each incident built on the small RAG stack of `rag_stack.py` (no simulator).

A case file is a YAML list of cases::

    - name: one node's card runs hot and its clock drops   # unique in the file; the test id
      engine: vllm              # optional: vllm (default) | triton, the engine's dialect
      seed: 0                   # optional: the noise's seed (default 0)
      drop: [infra.gpu_temp_c]  # optional: signals not deployed (no series at all)
      base:                     # optional: levels everywhere (before the onset, baselines);
        service.gc_pause_ratio: {all-nodes: 0.005}   # a signal rag_stack lacks is deployed so
      change:                   # signal → instance → value from the onset on (incident only)
        infra.gpu_temp_c: {node-2: {ramp: [69, 84, 20]}}
        access.request_latency_p99: {gateway: 0.9}
      expect:                   # one or more of
        root: gpu_thermal_throttling      # the top root cause
        roots_include: [slow_instance]    # ids among the root causes
        verdict: confirmed                # this file's rule: confirmed | refuted |
                                          #   inconclusive, or a list of those allowed
        not_root: [slow_instance]         # ids that must not be root causes
        instances: [node-2]               # where the top root (or, with no `root`, this
                                          #   file's rule) was found; compared as a set

Instances: `node-0` … `node-3` (the GPU nodes), or a shorthand: `all-nodes`, `gateway`
(`ingress-0`), `cache` (`redis-0`), `vdb` (`vdb-0`). Values are in the signal's canonical unit
(seconds, ratios 0–1, bytes, per second; docs/signals.md), or a shape over the incident window's
point index (15 s points, the onset at point 160; the hour before is points -240..-1):

- `{ramp: [from, to, points]}`: from the onset on, `from` to `to` over `points` points, then
  held (in `base`: the same ramp, so before the onset `from`);
- `{steps: [[offset, value], ...]}`: piecewise constant from the onset, `offset` points after
  it (a target down for two minutes: `[[0, 0], [8, 1]]`); before the first offset, the first
  value;
- `{trend: [value_at_onset, per_hour, hours]}`: a straight climb (or fall) that began `hours`
  before the onset (flat before it); for slow leaks across the baselines, mostly in `base`.

`.nan` is no sample: a series that stopped (an engine that crashed), also inside `steps`.
`base` takes the same instances and shapes as `change`.

A case states the mechanism the rule's description and its seed section name, with realistic
figures; the figures are not tuned to the engine. A rule's file holds at least one case where
it must be named and, where it has a near neighbour, one where the same symptom has another
cause and it must not be confirmed. Besides the cases: every rule has its file and every file
a rule; every case that names a root or confirms its rule fails on the healthy stack; every
case where a rule must not be confirmed fails on that rule's positive cases.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from rag_stack import CACHE, GATEWAY, NODES, ONSET, VDB, windows

from infersight.diagnose import diagnose
from infersight.diagnose.kb import load_kb
from infersight.diagnose.result import Diagnosis

CASES_DIR = Path(__file__).parent / "cases"
SHORTHANDS: dict[str, tuple[str, ...]] = {
    "all-nodes": NODES,
    "gateway": (GATEWAY,),
    "cache": (CACHE,),
    "vdb": (VDB,),
}
VERDICTS = {"confirmed", "refuted", "inconclusive"}
CASE_KEYS = {"name", "engine", "seed", "drop", "base", "change", "expect"}
EXPECT_KEYS = {"root", "roots_include", "verdict", "not_root", "instances"}
POINTS_PER_HOUR = 240

Value = float | Callable[[np.ndarray], np.ndarray]


def _shape(spec: Any, where: str) -> Value:
    """A value of a case file: a number or one of the shapes the module docstring lists."""
    if isinstance(spec, bool):
        raise ValueError(f"{where}: a boolean is not a value")
    if isinstance(spec, int | float):
        return float(spec)
    if not isinstance(spec, dict) or len(spec) != 1:
        raise ValueError(f"{where}: a number, or one of ramp, steps, trend: {spec!r}")
    ((kind, args),) = spec.items()
    if kind == "ramp":
        a, b, points = (float(x) for x in args)
        return lambda idx: a + (b - a) * np.clip((idx - ONSET) / max(points, 1.0), 0, 1)
    if kind == "steps":
        offsets = np.array([float(o) for o, _ in args])
        values = np.array([float(v) for _, v in args])

        def steps(idx: np.ndarray) -> np.ndarray:
            at = np.searchsorted(offsets, idx - ONSET, side="right") - 1
            return np.asarray(values[np.clip(at, 0, None)], dtype=float)

        return steps
    if kind == "trend":
        level, per_hour, hours = (float(x) for x in args)
        return lambda idx: level + per_hour * np.clip((idx - ONSET) / POINTS_PER_HOUR, -hours, None)
    raise ValueError(f"{where}: unknown shape {kind!r}")


def _per_instance(spec: Any, where: str) -> dict[str, dict[str, Value]]:
    if spec is None:
        return {}
    if not isinstance(spec, dict):
        raise ValueError(f"{where}: signal → instance → value")
    out: dict[str, dict[str, Value]] = {}
    for sig, per in spec.items():
        if not isinstance(per, dict) or not per:
            raise ValueError(f"{where}.{sig}: instance → value")
        row = out.setdefault(sig, {})
        for inst, v in per.items():
            value = _shape(v, f"{where}.{sig}.{inst}")
            for name in SHORTHANDS.get(inst, (inst,)):
                row[name] = value
    return out


@dataclass(frozen=True)
class Case:
    rule: str
    name: str
    change: dict[str, dict[str, Value]]
    expect: dict[str, Any]
    engine: str = "vllm"
    seed: int = 0
    base: dict[str, dict[str, Value]] = field(default_factory=dict)
    drop: tuple[str, ...] = ()

    def diagnose(self) -> Diagnosis:
        return diagnose(
            windows(self.change, engine=self.engine, base=self.base, drop=self.drop, seed=self.seed)
        )


def _case(rule: str, raw: Mapping[str, Any]) -> Case:
    where = f"{rule}.yaml: {raw.get('name', '?')}"
    unknown = set(raw) - CASE_KEYS
    if unknown:
        raise ValueError(f"{where}: unknown keys {sorted(unknown)}")
    expect = dict(raw.get("expect") or {})
    if not expect or set(expect) - EXPECT_KEYS:
        raise ValueError(f"{where}: expect needs one or more of {sorted(EXPECT_KEYS)}")
    verdicts = expect.get("verdict")
    if verdicts is not None:
        allowed = {verdicts} if isinstance(verdicts, str) else set(verdicts)
        if not allowed or allowed - VERDICTS:
            raise ValueError(f"{where}: verdict is one or more of {sorted(VERDICTS)}")
        expect["verdict"] = allowed
    if raw.get("engine", "vllm") not in ("vllm", "triton"):
        raise ValueError(f"{where}: engine is vllm or triton")
    return Case(
        rule=rule,
        name=str(raw["name"]),
        change=_per_instance(raw.get("change"), f"{where}: change"),
        expect=expect,
        engine=str(raw.get("engine", "vllm")),
        seed=int(raw.get("seed", 0)),
        base=_per_instance(raw.get("base"), f"{where}: base"),
        drop=tuple(raw.get("drop") or ()),
    )


def load_cases(folder: Path = CASES_DIR) -> list[Case]:
    cases = []
    for path in sorted(folder.glob("*.yaml")):
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
        if not isinstance(raw, list) or not raw:
            raise ValueError(f"{path.name}: a non-empty list of cases")
        names = [c.get("name") for c in raw]
        if len(set(names)) != len(names) or None in names:
            raise ValueError(f"{path.name}: every case needs a name of its own")
        cases += [_case(path.stem, c) for c in raw]
    return cases


def check(case: Case, dx: Diagnosis) -> list[str]:
    """What the diagnosis got wrong against the case's expectation (empty: all held)."""
    wrong = []
    roots = [r.hypothesis for r in dx.root_causes]
    exp = case.expect
    if "root" in exp and (not roots or roots[0] != exp["root"]):
        wrong.append(f"top root {roots[0] if roots else None!r}, expected {exp['root']!r}")
    for rid in exp.get("roots_include", ()):
        if rid not in roots:
            wrong.append(f"{rid!r} not among the roots")
    for rid in exp.get("not_root", ()):
        if rid in roots:
            wrong.append(f"{rid!r} named a root")
    h = dx.hypothesis(case.rule)
    if "verdict" in exp:
        verdict = h.verdict if h is not None else None
        if verdict not in exp["verdict"]:
            wrong.append(f"{case.rule} is {verdict}, expected {sorted(exp['verdict'])}")
    if "instances" in exp:
        at = dx.hypothesis(exp.get("root", case.rule))
        got = set(at.instances) if at is not None else set()
        want = {n for i in exp["instances"] for n in SHORTHANDS.get(i, (i,))}
        if got != want:
            wrong.append(f"instances {sorted(got)}, expected {sorted(want)}")
    return wrong


def explain(case: Case, dx: Diagnosis) -> str:
    """The engine's answer, for a failure's message."""
    lines = [f"roots: {[(r.hypothesis, r.confidence) for r in dx.root_causes]}"]
    h = dx.hypothesis(case.rule)
    if h is not None:
        lines.append(f"{case.rule}: {h.verdict} on {h.instances}")
        lines += [f"  {'+' if e.supports else '-'} {e.statement}" for e in h.evidence]
        if h.missing_signals:
            lines.append(f"  missing: {h.missing_signals}")
    return "\n".join(lines)


CASES = load_cases()


_DIAGNOSED: dict[tuple[str, str], Diagnosis] = {}


def _diagnosed(case: Case) -> Diagnosis:
    key = (case.rule, case.name)
    if key not in _DIAGNOSED:
        _DIAGNOSED[key] = case.diagnose()
    return _DIAGNOSED[key]


@pytest.mark.parametrize("case", CASES, ids=[f"{c.rule}:{c.name}" for c in CASES])
def test_rule_case(case: Case) -> None:
    dx = _diagnosed(case)
    wrong = check(case, dx)
    assert not wrong, "; ".join(wrong) + "\n" + explain(case, dx)


def test_every_rule_has_its_case_file_and_every_case_file_a_rule() -> None:
    rules = {r.id for r in load_kb().rules}
    files = {p.stem for p in CASES_DIR.glob("*.yaml")}
    assert rules - files == set(), "rules without a case file"
    assert files - rules == set(), "case files naming no rule"


def test_every_named_root_and_rule_exists() -> None:
    rules = {r.id for r in load_kb().rules}
    for case in CASES:
        named = {case.expect.get("root")} | set(case.expect.get("roots_include", ()))
        named |= set(case.expect.get("not_root", ()))
        assert named - {None} <= rules, f"{case.rule}: {case.name}"


@cache
def _healthy(engine: str, seed: int) -> Diagnosis:
    return diagnose(windows({}, engine=engine, seed=seed))


def test_a_positive_case_fails_on_the_healthy_stack() -> None:
    # the expectations can fail: every case naming a root or confirming its rule, checked
    # against the healthy stack (its change and its base levels removed: a precursor lives in
    # `base`), finds something wrong
    positives = [c for c in CASES if "root" in c.expect or c.expect.get("verdict") == {"confirmed"}]
    assert positives
    for case in positives:
        assert check(case, _healthy(case.engine, case.seed)), f"{case.rule}: {case.name}"


def test_a_negative_case_fails_on_its_rules_positive() -> None:
    # a case where the rule must not be confirmed, checked against the diagnosis of a case where
    # it is named, finds something wrong: the negatives are not vacuous
    for rule in sorted({c.rule for c in CASES}):
        mine = [c for c in CASES if c.rule == rule]
        positives = [c for c in mine if c.expect.get("root") == rule]
        negatives = [c for c in mine if "confirmed" not in c.expect.get("verdict", {"confirmed"})]
        for neg in negatives:
            for pos in positives:
                assert check(neg, _diagnosed(pos)), f"{rule}: {neg.name} holds on {pos.name}"


def test_the_shapes() -> None:
    idx = np.arange(ONSET - 2, ONSET + 12)
    ramp = _shape({"ramp": [1, 3, 4]}, "t")
    assert callable(ramp) and list(ramp(idx)[[0, 2, 4, 6, 13]]) == [1, 1, 2, 3, 3]
    steps = _shape({"steps": [[0, 0], [8, 1]]}, "t")
    assert callable(steps) and list(steps(idx)[[0, 2, 9, 10, 13]]) == [0, 0, 0, 1, 1]
    trend = _shape({"trend": [10, -1, 2]}, "t")
    assert callable(trend)
    hour = np.array([ONSET - 3 * 240, ONSET - 240, ONSET, ONSET + 240])
    assert list(trend(hour)) == [12, 11, 10, 9]
    with pytest.raises(ValueError):
        _shape({"wave": [1]}, "t")
