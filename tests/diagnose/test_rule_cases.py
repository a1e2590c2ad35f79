"""Every rule's test cases, as data: `cases/<rule_id>.yaml`, one file per rule of the built-in
knowledge base, each incident built on the small RAG stack of `rag_stack.py` (no simulator).
The case format is `infersight.lab.evaluate.path_cases`'s.

A case states the mechanism the rule's description and its seed section name, with realistic
figures; the figures are not tuned to the engine. A rule's file holds at least one case where
it must be named and, where it has a near neighbour, one where the same symptom has another
cause and it must not be confirmed. Besides the cases: every rule has its file and every file
a rule; every case that names a root or confirms its rule fails on the healthy stack; every
case where a rule must not be confirmed fails on that rule's positive cases.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import numpy as np
import pytest

from infersight.diagnose import diagnose
from infersight.diagnose.kb import load_kb
from infersight.diagnose.result import Diagnosis
from infersight.lab.evaluate.path_cases import Case, _shape, check, explain, load_cases
from infersight.lab.evaluate.rag_stack import ONSET, windows

CASES_DIR = Path(__file__).parent / "cases"
CASES = load_cases(CASES_DIR)


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
