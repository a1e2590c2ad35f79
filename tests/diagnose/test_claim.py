"""More work claims only what it could have caused (`placing.claim`): a queue that formed on a
replica before the traffic reached it is no consequence of the traffic. Read with the rule that
names the queue's cause left out, so that only the walk says it."""

from __future__ import annotations

import yaml

from infersight.diagnose.kb import load_kb
from infersight.lab.evaluate.leave_one_out import without
from infersight.lab.evaluate.path_cases import _case

# node-0's pool was cut at the onset: its requests queue at once, its GPU idle; six minutes
# later the day's traffic rises on every replica, and the others queue under it
CASE = """
name: node-0 queues at the onset, before the traffic rises everywhere
base:
  service.request_rate: {all-nodes: 8}
  service.queue_length: {all-nodes: 0}
  service.queue_wait_p99: {all-nodes: 0.004}
  inference.gpu_util: {all-nodes: 0.5}
change:
  service.request_rate: {all-nodes: {steps: [[0, 8], [24, 14]]}}
  service.queue_wait_p99: {node-0: 1.2}
  service.e2e_latency_p99:
    node-0: 1.9
    node-1: {steps: [[0, 0.3], [26, 0.9]]}
    node-2: {steps: [[0, 0.3], [26, 0.9]]}
    node-3: {steps: [[0, 0.3], [26, 0.9]]}
  service.queue_length:
    node-0: 9
    node-1: {steps: [[0, 0], [26, 3]]}
    node-2: {steps: [[0, 0], [26, 3]]}
    node-3: {steps: [[0, 0], [26, 3]]}
  inference.gpu_util: {node-0: 0.2}
  access.request_latency_p99: {gateway: 1.9}
expect: {node: service}
"""


def test_a_queue_that_began_before_the_traffic_came_is_not_the_traffics() -> None:
    case = _case("walk", yaml.safe_load(CASE))
    roots = case.diagnose(kb=without(load_kb(), "threadpool_too_small")).root_causes
    assert roots and roots[0].node == "service:node-0", [(r.hypothesis, r.node) for r in roots]
    assert roots[0].unnamed
    assert "traffic_surge" in [r.hypothesis for r in roots]
