"""`adds`: where on the request path the added time sits, client view against server view."""

from __future__ import annotations

import pytest
from diagnose_frames import step_frame as _frame

from infersight.detect import detect
from infersight.diagnose.conditions import eval_condition
from infersight.diagnose.context import Context
from infersight.diagnose.kb import Condition

ENGINES = ("node-0", "node-1", "node-2")
HOP = Condition(
    signal="access.upstream_latency_p99",
    state="adds",
    than="service.e2e_latency_p99",
    factor=2,
)


def _ctx(gateway: tuple[float, float], engine_after: float | None) -> Context:
    spec = {"access.upstream_latency_p99": {"gw": gateway}}
    if engine_after is not None:
        spec["service.e2e_latency_p99"] = {n: (0.3, engine_after) for n in ENGINES}
    frame = _frame(spec)
    w = {"incident": frame}
    return Context.build(frame, detect(w), ("access.upstream_latency_p99",))


def test_time_the_engines_do_not_see_was_added_between_them() -> None:
    out = eval_condition(_ctx((0.4, 2.4), 0.31), HOP, None)
    assert out.truth is True and out.instances == frozenset({"gw"})
    assert "added between them" in out.evidence[0].statement


def test_an_engine_that_slowed_as_much_holds_the_time_itself() -> None:
    assert eval_condition(_ctx((0.4, 1.4), 1.2), HOP, None).truth is False


def test_without_a_server_side_view_where_the_time_sits_is_unknown() -> None:
    out = eval_condition(_ctx((0.4, 2.4), None), HOP, None)
    assert out.truth is None and "service.e2e_latency_p99" in out.missing


def test_adds_compares_a_client_view_with_a_server_view() -> None:
    with pytest.raises(ValueError, match="client-timed"):
        Condition(signal="service.e2e_latency_p99", state="adds", than="service.ttft_p99", factor=2)
    with pytest.raises(ValueError, match="needs `than`"):
        Condition(signal="access.upstream_latency_p99", state="adds", factor=2)
