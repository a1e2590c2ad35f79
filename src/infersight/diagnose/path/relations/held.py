"""Requests held longer hold their memory longer (seed §3.2, §5.2).

Every admitted request keeps its KV cache and activations on the card until it completes, and
a request waiting in the service's queue keeps its place (and, in one process, its buffers).
By Little's law the number held at once is arrivals × time held: when requests wait longer,
more of them hold memory at once, and the card fills without any more work arriving; more
requests running in larger batches hold more of it from the moment they run. Memory that
rose before any of ours was held longer or ran fuller is another's. Seed
§5.2: "VRAM filled with the intermediate state of the piled-up requests, and the GPU idled".
"""

from __future__ import annotations

from infersight.diagnose.path.change import Change
from infersight.diagnose.path.reader import Reader

NAME = "held longer"
ORDER = 85
#: the occupancy that requests in flight hold
_HELD = frozenset(
    {"inference.kv_cache_usage", "inference.gpu_mem_used_ratio", "inference.gpu_mem_used_bytes"}
)


def doc() -> str:
    return (
        "**held longer** — the KV cache and GPU memory filling are explained by requests "
        "waiting or taking longer in the service on that machine (Little's law: more held at "
        "once)"
    )


_IN_FLIGHT = frozenset(
    {"inference.running_requests", "inference.batch_size", "inference.kv_cache_usage"}
)


def explain(r: Reader, c: Change) -> list[Change]:
    if c.signal not in _HELD or c.direction != "up":
        return []
    front = r.sibling(c.node, "service")
    engine = r.sibling(c.node, "engine")
    found: list[Change] = []
    if front is not None:
        # the requests were held first, and the memory filled as they piled up: memory that
        # came at once, before any request waited longer, came with something else
        waited = r.at(front, ("waiting", "time"), direction="up", bad=True)
        found += [x for x in waited if x.onset < c.onset]
    if engine is not None and c.node != engine:
        # more of our requests in flight hold more of the card, from when they are in flight
        held = r.at(engine, ("saturation",), direction="up")
        found += [x for x in held if x.signal in _IN_FLIGHT and x.onset <= c.onset]
    return found
