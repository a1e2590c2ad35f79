"""`outwaits_load`: a mean queue wait longer than servers this busy can make (seed §3.3)."""

from __future__ import annotations

import pytest
from diagnose_frames import step_frame as _frame

from infersight.detect import detect
from infersight.diagnose.conditions import eval_condition
from infersight.diagnose.context import Context
from infersight.diagnose.kb import Condition

WAIT = Condition(
    signal="service.queue_wait_avg", state="outwaits_load", than="inference.forward_time_avg"
)


def _ctx(rate: float | None, wait_after: float, service: float = 0.08) -> Context:
    spec = {
        "service.queue_wait_avg": {"node-0": (0.0002, wait_after)},
        "inference.forward_time_avg": {"node-0": (service, service)},
    }
    if rate is not None:
        spec["service.request_rate"] = {"node-0": (rate, rate)}
    frame = _frame(spec)
    return Context.build(frame, detect({"incident": frame}), ("service.queue_wait_avg",))


def test_a_long_wait_on_an_idle_server_is_not_a_queue_for_it() -> None:
    # 1/s × 80 ms: busy 8% of the time, where a queue for it waits about 7 ms
    out = eval_condition(_ctx(1.0, 0.2), WAIT, None)
    assert out.truth is True and out.instances == frozenset({"node-0"})
    assert "busy 8% of the time at most" in out.evidence[0].statement


def test_the_same_wait_on_a_busy_server_is_what_a_queue_makes() -> None:
    # 10/s × 80 ms: busy 80% of the time, where a queue waits 320 ms on average
    assert eval_condition(_ctx(10.0, 0.2), WAIT, None).truth is False


def test_a_short_wait_on_an_idle_server_is_within_its_queue() -> None:
    assert eval_condition(_ctx(1.0, 0.02), WAIT, None).truth is False


def test_past_full_load_nothing_bounds_the_wait() -> None:
    assert eval_condition(_ctx(20.0, 5.0), WAIT, None).truth is False


def test_without_the_request_rate_it_rules_nothing_out() -> None:
    assert eval_condition(_ctx(None, 0.2), WAIT, None).truth is not True


def test_it_compares_a_wait_with_a_service_time() -> None:
    with pytest.raises(ValueError, match="needs `than`"):
        Condition(signal="service.queue_wait_avg", state="outwaits_load")
    with pytest.raises(ValueError, match="both in seconds"):
        Condition(
            signal="service.queue_wait_avg", state="outwaits_load", than="service.request_rate"
        )
