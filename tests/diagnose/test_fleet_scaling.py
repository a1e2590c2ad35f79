"""What keeps a diagnosis linear in the fleet: figures shared by every instance are read once
per window, and rows are found by index, never by scanning the fleet per instance."""

from __future__ import annotations

import numpy as np
import pytest
from diagnose_frames import step_frame

from infersight.detect import detect
from infersight.diagnose.conditions import eval_condition
from infersight.diagnose.context import Context
from infersight.diagnose.kb import Condition
from infersight.diagnose.states.outpaces import _median_without

NODES = tuple(f"node-{i}" for i in range(7))


def _ctx(spec: dict[str, dict[str, tuple[float, float]]]) -> Context:
    frame = step_frame(spec)
    return Context.build(frame, detect({"incident": frame}), ("access.upstream_latency_p99",))


@pytest.mark.parametrize("size", [3, 4, 9, 10])
def test_median_without_one_reading_is_the_peers_median(size: int) -> None:
    rng = np.random.default_rng(size)
    values = np.round(rng.uniform(0, 5, size), 1)  # ties included
    ordered = np.sort(values)
    for k, own in enumerate(values):
        peers = [float(v) for j, v in enumerate(values) if j != k]
        assert _median_without(ordered, float(own)) == float(np.median(peers))


def test_rows_are_found_by_index_and_missing_instances_have_none() -> None:
    ctx = _ctx({"service.e2e_latency_p99": {n: (0.3, 0.3) for n in NODES}})
    s = ctx.frame.get("service.e2e_latency_p99")
    assert s is not None
    for n in NODES:
        row = ctx.row("service.e2e_latency_p99", n)
        assert row is not None and np.array_equal(row, s.row(n), equal_nan=True)
    assert ctx.row("service.e2e_latency_p99", "elsewhere") is None
    assert ctx.row("infra.gpu_temp_c", NODES[0]) is None
    assert ("positions", "service.e2e_latency_p99") in ctx.memo


def test_outpaces_sorts_the_fleet_once_per_signal() -> None:
    fwd = {n: (0.023, 0.023 * (1.6 if n == "node-1" else 1.0)) for n in NODES}
    clk = {n: (1980.0, 1980.0) for n in NODES}
    ctx = _ctx({"inference.forward_time_avg": fwd, "infra.gpu_sm_clock_mhz": clk})
    pace = Condition(
        signal="inference.forward_time_avg",
        state="outpaces",
        than="infra.gpu_sm_clock_mhz",
        factor=1.25,
        where="same",
    )
    out = eval_condition(ctx, pace, frozenset(NODES))
    assert out.truth is True and out.instances == frozenset({"node-1"})
    # one sort per signal and role: every node here has one role
    sorted_keys = [k[:2] for k in ctx.memo if k[0] == "outpaces_sorted"]
    assert sorted(sorted_keys) == [
        ("outpaces_sorted", "inference.forward_time_avg"),
        ("outpaces_sorted", "infra.gpu_sm_clock_mhz"),
    ]


def test_adds_reads_the_servers_growth_once_for_every_client() -> None:
    spec = {
        "access.upstream_latency_p99": {f"gw-{i}": (0.4, 2.4) for i in range(3)},
        "service.e2e_latency_p99": {n: (0.3, 0.31) for n in NODES},
    }
    ctx = _ctx(spec)
    hop = Condition(
        signal="access.upstream_latency_p99",
        state="adds",
        than="service.e2e_latency_p99",
        factor=2,
    )
    out = eval_condition(ctx, hop, None)
    assert out.truth is True and len(out.instances) == 3
    grown = [v for k, v in ctx.memo.items() if k[0] == "adds_servers"]
    assert len(grown) == 1 and grown[0][0] == len(NODES)
    assert f"on any of {len(NODES)} instance(s)" in out.evidence[0].statement
