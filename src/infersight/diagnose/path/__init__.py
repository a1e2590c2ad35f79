"""The request-path walk (seed §2.3, §5.2): the path built from what is scraped, the changes
at each node, the mechanisms that link them, and the walk from the users' symptom to the
changes nothing explains. Rules name the mechanism where it ends (`diagnose/roots.py`).

API::

    trace(ctx, config=None, extra_edges=()) -> Walk
"""

from __future__ import annotations

from collections.abc import Iterable

from infersight.diagnose.context import Context
from infersight.diagnose.path.change import Change
from infersight.diagnose.path.changes import find_changes
from infersight.diagnose.path.config import PathConfig
from infersight.diagnose.path.reader import Reader, down_spells
from infersight.diagnose.path.walk import Link, Walk, key, walk
from infersight.diagnose.path.world import HOP, Node, World, build_world


def trace(
    ctx: Context,
    config: PathConfig | None = None,
    extra_edges: Iterable[tuple[str, str, str]] = (),
) -> Walk:
    """Build the path of the incident window, find its changes and walk it."""
    cfg = config or PathConfig()
    world = build_world(ctx.frame, extra_edges)
    changes = find_changes(ctx, world, cfg)
    roles = {inst: ctx.role(inst) for inst in world.parts}
    reader = Reader(world, changes, cfg, roles, ctx.frame.step, down_spells(ctx), ctx.frame)
    return walk(reader, ctx.config.symptom_min_score)


__all__ = ["HOP", "Change", "Link", "Node", "PathConfig", "Walk", "World", "key", "trace"]
