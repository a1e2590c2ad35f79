"""The request-path walk's cases, as data (`path_cases/*.yaml`, the format of
`infersight.lab.evaluate.path_cases`): incidents a rule about something downstream used to be
named for, or that no rule names, each read from where the walk ends and where the work piled
up. Every case fails on the healthy stack, so none can pass by saying nothing."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest

from infersight.diagnose import diagnose
from infersight.diagnose.result import Diagnosis
from infersight.lab.evaluate.path_cases import Case, check, explain, load_cases
from infersight.lab.evaluate.rag_stack import windows

CASES = load_cases(Path(__file__).parent / "path_cases")


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_path_case(case: Case) -> None:
    dx = case.diagnose()
    wrong = check(case, dx)
    assert not wrong, "; ".join(wrong) + "\n" + explain(case, dx)


@cache
def _healthy(engine: str, seed: int) -> Diagnosis:
    return diagnose(windows({}, engine=engine, seed=seed))


def test_every_path_case_fails_on_the_healthy_stack() -> None:
    for case in CASES:
        assert check(case, _healthy(case.engine, case.seed)), case.name
