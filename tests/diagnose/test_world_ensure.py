"""A change may name a node no readable series made (every series of the part stopped before
the window: its absence is the change); the walk must have that node, not fail on it."""

from __future__ import annotations

import numpy as np

from infersight.diagnose.path.world import build_world
from infersight.frame import MetricFrame, SignalSeries


def test_a_node_only_a_change_names_is_added_unlinked() -> None:
    frame = MetricFrame(0.0, 60.0, 3, {
        "service.queue_length": SignalSeries(("node-0", "10.4.5.41"),
                                             np.array([[1.0, 2.0, 3.0], [np.nan] * 3])),
    })  # fmt: skip
    w = build_world(frame)
    assert "service:10.4.5.41" not in w.nodes
    w.ensure("service:10.4.5.41")
    node = w.nodes["service:10.4.5.41"]
    assert (node.part, node.instance) == ("service", "10.4.5.41")
    assert "service" in w.parts["10.4.5.41"] and not w.callers("service:10.4.5.41")
    before = dict(w.nodes)
    w.ensure("service:node-0")
    assert w.nodes == before
