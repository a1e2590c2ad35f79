"""A limit that only shows under more work (`under_load`) is named before the root that sent
the work (a burst a sound pool absorbs), after a root that sent none or failed: a slower
callee that holds the workers longer, replicas out of rotation. Read with the rule that names
that root left out, so that only the walk's order says it (the closest to an incident no rule
was written for)."""

from __future__ import annotations

from pathlib import Path

import pytest

from infersight.diagnose.kb import load_kb
from infersight.lab.evaluate.leave_one_out import without
from infersight.lab.evaluate.path_cases import load_cases

CASES = Path(__file__).parent / "cases"


@pytest.mark.parametrize(
    ("rule", "name", "first"),
    [
        ("threadpool_too_small", "the queue grows because the vector DB got slow", "vdb-0"),
        ("lb_instance_removed", "half the fleet was taken out hours before", "service:node-"),
    ],
)
def test_a_pool_is_named_after_what_slowed_or_emptied_its_callees(
    rule: str, name: str, first: str
) -> None:
    (case,) = [c for c in load_cases(CASES) if c.rule == rule and c.name.startswith(name)]
    left_out = "vector_db_slow" if rule == "threadpool_too_small" else rule
    roots = case.diagnose(kb=without(load_kb(), left_out)).root_causes
    assert roots and first in roots[0].node, [(r.hypothesis, r.node) for r in roots]
    assert roots[0].hypothesis != "threadpool_too_small"
