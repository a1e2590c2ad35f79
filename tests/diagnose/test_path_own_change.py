"""`its own change` (diagnose/path/relations/own.py): a resource running short explains a
part's time, not that the part got busier or fuller. A card that heats up beside its own work
does not explain its memory filling; another process on the card does (as `what it runs on`
reads a card: by its clock and what more work does not make, never by its heat)."""

from __future__ import annotations

from walked import walk_of

CASE = """
name: node-2's card heats up and its memory fills; another process arrives on it
base:
  inference.gpu_processes: {all-nodes: 1}
  inference.gpu_mem_used_ratio: {all-nodes: 0.6}
change:
  infra.gpu_temp_c: {node-2: {ramp: [69, 83, 8]}}
  inference.gpu_processes: {node-2: 2}
  inference.gpu_mem_used_ratio: {node-2: {ramp: [0.6, 0.95, 12]}}
  inference.gpu_util: {node-2: {ramp: [0.62, 0.9, 12]}}
  inference.forward_time_avg: {node-2: 0.3}
  service.e2e_latency_p99: {node-2: 1.2}
expect: {node: gpu}
"""


def test_heat_explains_no_fuller_card_another_process_does() -> None:
    walk = walk_of(CASE)
    changes = {(c.node, c.signal): c for c in walk.reader.changes}
    filled = changes[("gpu:node-2", "inference.gpu_mem_used_ratio")]
    walk.extend([filled])
    own = {link.cause.signal for link in walk.causes(filled) if link.relation == "its own change"}
    assert "infra.gpu_temp_c" not in own
    assert "inference.gpu_processes" in own
