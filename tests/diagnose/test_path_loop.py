"""A loop across a part and what it runs on (`Walk.ends`): batches held longer fill the card,
and a fuller card holds them longer. With no more work from outside, what changed is under
the engine, on its card: the walk ends at the GPU, never at the batches it holds."""

from __future__ import annotations

from walked import walk_of

# dcgm-exporter counts no processes: the card's memory and busy share are all it shows
CASE = """
name: node-2's card fills and gets busier at the same traffic; its batches grow with it
base:
  service.request_rate: {all-nodes: 8}
  inference.gpu_mem_used_ratio: {all-nodes: 0.6}
  inference.batch_size: {all-nodes: 4}
  inference.running_requests: {all-nodes: 4}
drop: [inference.gpu_processes]
change:
  inference.gpu_mem_used_ratio: {node-2: 0.93}
  inference.gpu_util: {node-2: 0.95}
  inference.batch_size: {node-2: 11}
  inference.running_requests: {node-2: 11}
  inference.kv_cache_usage: {node-2: 0.9}
  inference.forward_time_avg: {node-2: 0.3}
  service.e2e_latency_p99: {node-2: 1.4}
expect: {node: gpu}
"""


def test_a_loop_between_the_batches_and_the_card_ends_on_the_card() -> None:
    walk = walk_of(CASE)
    ends = {c.node for c in walk.ends(walk.symptoms)}
    assert ends == {"gpu:node-2"}, sorted((c.node, c.signal) for c in walk.ends(walk.symptoms))
