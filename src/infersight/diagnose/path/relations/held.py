"""Requests held longer hold their memory longer (seed §3.2, §5.2).

Every admitted request keeps its KV cache and activations on the card until it completes, and
a request waiting in the service's queue keeps its place (and, in one process, its buffers).
By Little's law the number held at once is arrivals × time held: when requests wait longer,
more of them hold memory at once, and the card fills without any more work arriving. Seed
§5.2: "VRAM filled with the intermediate state of the piled-up requests, and the GPU idled".
"""

from __future__ import annotations

from infersight.diagnose.path.changes import Change
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


def explain(r: Reader, c: Change) -> list[Change]:
    if c.signal not in _HELD or c.direction != "up":
        return []
    front = r.sibling(c.node, "service")
    if front is None:
        return []
    found = r.at(front, ("waiting", "time"), direction="up", bad=True)
    # the requests were held first, and the memory filled as they piled up: memory that came
    # at once, before any request waited longer, came with something else (another process)
    return [x for x in found if x.onset < c.onset]
