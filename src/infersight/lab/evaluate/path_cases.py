"""Incidents written as data, on the small RAG stack of `rag_stack.py` (no simulator): the
case format of `tests/diagnose/cases/` (one file per rule) and `tests/diagnose/path_cases/`
(the request-path walk's), read here so that the tests and `bench/leave_one_out.py` share it.

A case file is a YAML list of cases::

    - name: one node's card runs hot and its clock drops   # unique in the file; the test id
      engine: vllm              # optional: vllm (default) | triton, the engine's dialect
      seed: 0                   # optional: the noise's seed (default 0)
      drop: [infra.gpu_temp_c]  # optional: signals not deployed (no series at all)
      path: {calls: [[service:api-0, service:rerank-0]]}   # optional: declared path edges
                                # (diagnose --path-file's format, diagnose/path/topology.py)
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
        node: gpu                         # the top root's place on the path: a part (gpu,
                                          #   cache, hop, …) or a node (gpu:node-2)
        unnamed: true                     # the top root is a change no rule names
        bottleneck: hop                   # where the work piled up: a part or a node; ""
                                          #   for none
        trigger: true                     # the top root sent more work down the path
        first_signals: [infra.gpu_sm_clock_mhz]   # each among the top root's first three
                                                  #   pieces of evidence
        verdicts: {cache_capacity: [inconclusive]}   # other rules' verdicts allowed

Instances: `node-0` … `node-3` (the GPU nodes), any other name (a machine of its own), or a
shorthand: `all-nodes`, `gateway` (`ingress-0`), `cache` (`redis-0`), `vdb` (`vdb-0`).
Values are in the signal's canonical unit (seconds, ratios 0–1, bytes, per second;
docs/signals.md), or a shape over the incident window's point index (15 s points, the onset at
point 160; the hour before is points -240..-1):

- `{ramp: [from, to, points]}`: from the onset on, `from` to `to` over `points` points, then
  held (in `base`: the same ramp, so before the onset `from`);
- `{steps: [[offset, value], ...]}`: piecewise constant from the onset, `offset` points after
  it (a target down for two minutes: `[[0, 0], [8, 1]]`); before the first offset, the first
  value;
- `{trend: [value_at_onset, per_hour, hours]}`: a straight climb (or fall) that began `hours`
  before the onset (flat before it); for slow leaks across the baselines, mostly in `base`.

`.nan` is no sample: a series that stopped (an engine that crashed), also inside `steps`.
`base` takes the same instances and shapes as `change`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from infersight.diagnose import diagnose
from infersight.diagnose.kb import KnowledgeBase
from infersight.diagnose.path.topology import Topology, parse_topology
from infersight.diagnose.result import Diagnosis
from infersight.lab.evaluate.rag_stack import CACHE, GATEWAY, NODES, ONSET, VDB, windows

SHORTHANDS: dict[str, tuple[str, ...]] = {
    "all-nodes": NODES,
    "gateway": (GATEWAY,),
    "cache": (CACHE,),
    "vdb": (VDB,),
}
VERDICTS = {"confirmed", "refuted", "inconclusive"}
CASE_KEYS = {"name", "engine", "seed", "drop", "base", "change", "path", "expect"}
EXPECT_KEYS = {
    "root", "roots_include", "verdict", "not_root", "instances",
    "node", "unnamed", "bottleneck", "trigger", "first_signals", "verdicts",
}  # fmt: skip
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
    topology: Topology | None = None

    def windows(self) -> dict[str, Any]:
        return windows(
            self.change, engine=self.engine, base=self.base, drop=self.drop, seed=self.seed
        )

    def diagnose(self, kb: KnowledgeBase | None = None) -> Diagnosis:
        return diagnose(self.windows(), kb=kb, topology=self.topology)


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
        topology=parse_topology(raw["path"], f"{where}: path") if "path" in raw else None,
    )


def load_cases(folder: Path) -> list[Case]:
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
    for rid, allowed in exp.get("verdicts", {}).items():
        other = dx.hypothesis(rid)
        seen = other.verdict if other is not None else None
        if seen not in ({allowed} if isinstance(allowed, str) else set(allowed)):
            wrong.append(f"{rid} is {seen}, expected {allowed}")
    h = dx.hypothesis(case.rule)
    if "verdict" in exp:
        verdict = h.verdict if h is not None else None
        if verdict not in exp["verdict"]:
            wrong.append(f"{case.rule} is {verdict}, expected {sorted(exp['verdict'])}")
    if "instances" in exp:
        at = dx.hypothesis(exp.get("root", case.rule))
        found = set(at.instances) if at is not None else set()
        want = {n for i in exp["instances"] for n in SHORTHANDS.get(i, (i,))}
        if found != want:
            wrong.append(f"instances {sorted(found)}, expected {sorted(want)}")
    return wrong + _on_path(exp, dx)


def _place(want: str, got: str) -> bool:
    """A part (`gpu`) matches any node of it; a node (`gpu:node-2`, `hop`) only itself."""
    if not want:
        return not got
    return got == want or (":" not in want and got.split(":")[0] == want)


def _on_path(exp: Mapping[str, Any], dx: Diagnosis) -> list[str]:
    """The top root's place on the request path, as the case expects it."""
    keys = {"node", "unnamed", "bottleneck", "trigger", "first_signals"}
    if not keys & set(exp):
        return []
    if not dx.root_causes:
        return ["no root cause"]
    top, wrong = dx.root_causes[0], []
    if "node" in exp and not any(_place(str(exp["node"]), n) for n in top.nodes or (top.node,)):
        wrong.append(f"root at {top.node or '(no node)'}, expected {exp['node']}")
    if "unnamed" in exp and top.unnamed != bool(exp["unnamed"]):
        wrong.append(f"root {top.hypothesis} unnamed={top.unnamed}, expected {exp['unnamed']}")
    if "bottleneck" in exp and not _place(str(exp["bottleneck"] or ""), top.bottleneck):
        wrong.append(f"bottleneck {top.bottleneck or '(none)'}, expected {exp['bottleneck']}")
    if "trigger" in exp and top.trigger != bool(exp["trigger"]):
        wrong.append(f"trigger={top.trigger}, expected {exp['trigger']}")
    h = dx.hypothesis(top.hypothesis)
    first = [e.signal for e in (h.evidence if h is not None else ())][:3]
    for sig in exp.get("first_signals", ()):
        if sig not in first:
            wrong.append(f"{sig} not among the root's first three signals {first}")
    return wrong


def explain(case: Case, dx: Diagnosis) -> str:
    """The engine's answer, for a failure's message."""
    lines = [
        f"roots: {[(r.hypothesis, r.confidence, r.node, r.bottleneck) for r in dx.root_causes]}"
    ]
    h = dx.hypothesis(case.rule)
    if h is not None:
        lines.append(f"{case.rule}: {h.verdict} on {h.instances}")
        lines += [f"  {'+' if e.supports else '-'} {e.statement}" for e in h.evidence]
        if h.missing_signals:
            lines.append(f"  missing: {h.missing_signals}")
    return "\n".join(lines)
