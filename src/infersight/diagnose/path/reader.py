"""What a relation reads: the world, the changes at each node, and when a cause may precede."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import numpy as np

from infersight.detect.absence import TARGET_UP
from infersight.diagnose.context import Context
from infersight.diagnose.path.change import Change, by_node
from infersight.diagnose.path.config import PathConfig
from infersight.diagnose.path.dating import part_way
from infersight.diagnose.path.world import World, node_id, peers
from infersight.frame import MetricFrame
from infersight.signals import all_signals


@dataclass
class Reader:
    world: World
    changes: list[Change]
    config: PathConfig
    roles: Mapping[str, str]
    step: float
    #: per instance, when its target stopped answering and when it answered again
    downs: Mapping[str, list[tuple[float, float]]] = field(default_factory=dict)
    #: the readings, for what a change's level was at a moment (None: only the changes)
    frame: MetricFrame | None = None
    at_node: dict[str, list[Change]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.at_node = by_node(self.changes)

    def at(
        self,
        nodes: str | Iterable[str],
        facets: Iterable[str],
        *,
        direction: str | None = None,
        bad: bool | None = None,
    ) -> list[Change]:
        """Changes at these nodes of these facets (this way, or only bad ones). A slow climb
        (a trend) explains nothing that happened at once: it is what a forecast is walked
        from, never a cause of a step."""
        want = set(facets)
        ids = [nodes] if isinstance(nodes, str) else list(nodes)
        return [
            c
            for n in ids
            for c in self.at_node.get(n, ())
            if c.facet in want
            and c.kind != "trend"
            and (direction is None or c.direction == direction)
            and (bad is None or c.bad == bad)
        ]

    def reader_signals(self, node: str) -> set[str]:
        """The signals a node has readable series of (changed or not)."""
        return self.world.signals.get(node, set())

    def unavailable(self, nodes: str | Iterable[str]) -> list[Change]:
        return [c for c in self.at(nodes, ("availability",)) if c.bad]

    def precedes(self, cause: Change, effect: Change) -> bool:
        """A cause does not start after its effect, beyond what dating can tell apart. A
        part that went down is a hard line: what began once it was down or back (a card
        refilled by the reloaded engine and the work queued for it) explains nothing of what
        that part did before it came back."""
        if cause.onset > effect.onset + max(self.config.onset_slack_s, 2 * self.step):
            return False
        # the spell itself (a restart counted, a load's time) is read when the part is back
        mine = cause.facet != "availability" and (
            cause.instance == effect.instance
            or cause.node in self.world.runs_on.get(effect.node, ())
        )
        # what began at the very moment it went down can be what took it down (a card's Xid
        # dated on the scrape that found the engine gone)
        return not mine or not any(
            cause.onset > start and effect.onset <= end
            for start, end in self.downs.get(effect.instance, ())
        )

    def together(self, a: Change, b: Change) -> bool:
        """Dated as one event, within what dating can tell apart."""
        return abs(a.onset - b.onset) <= max(self.config.onset_slack_s, 2 * self.step)

    def carried_before(self, work: Change, effect: Change) -> bool:
        """The work at the effect's onset was carried before without it: a rise well before
        the effect (longer than dating can blur) that had reached this level already (or one
        `more_work` short of it) while nothing was wrong explains nothing that came later (the
        same load, now slower)."""
        if self.frame is None or effect.onset - work.onset <= self.config.onset_slack_s:
            return False
        s = self.frame.get(work.signal)
        row = s.row(work.instance) if s is not None else None
        if row is None:
            return False
        t = self.frame.times
        span = (t >= work.onset) & (t <= effect.onset - self.config.onset_slack_s)
        early = row[span]
        late = row[np.abs(t - effect.onset) <= 2 * self.step]
        early, late = early[np.isfinite(early)], late[np.isfinite(late)]
        if early.size < 3 or not late.size or self._showed(effect, span):
            return False
        # what is not more work than that (`more_work`) is the same load, now slower
        return float(np.median(late)) <= float(np.max(early)) * self.config.more_work

    def _showed(self, c: Change, span: np.ndarray) -> bool:
        """Whether the change already showed within `span` (halfway or more, where dating
        places a change's first sign): then what was carried there came with it (each burst
        fills the batches). A burst that nudged it a quarter of the way is noise it rides."""
        s = self.frame.get(c.signal) if self.frame is not None else None
        row = s.row(c.instance) if s is not None else None
        if row is None or c.before is None or c.after is None:
            return False
        mark = part_way(c.before, c.after, 0.5)
        with np.errstate(invalid="ignore"):
            past = row[span] > mark if c.after > c.before else row[span] < mark
        return bool(np.any(past))

    def more_work(self, c: Change) -> bool:
        """An arrivals change that is more work by the configured ratio."""
        if c.facet != "arrivals" or c.direction != "up":
            return False
        r = c.ratio
        return r is None or r >= self.config.more_work

    def peers(self, node: str) -> list[str]:
        return peers(self.world, node, self.roles)

    def sibling(self, node: str, part: str) -> str | None:
        """The node of another part on the same instance, where it exists."""
        me = self.world.nodes.get(node)
        if me is None or not me.instance:
            return None
        other = node_id(part, me.instance)
        return other if other in self.world.nodes else None

    def independent(self, c: Change) -> bool:
        """More work does not make it (`independent` in signals.yaml): a hardware error."""
        sig = all_signals().get(c.signal)
        return sig is not None and sig.independent

    def loads_with_demand(self, c: Change) -> bool:
        """Whether more work alone can make this change: an effect, or a signal that follows
        demand, or a resource that is not `independent` of it (a hardware error, another
        process on the card are not)."""
        sig = all_signals().get(c.signal)
        if sig is None or sig.independent:
            return False
        return c.is_effect or sig.load or c.facet in ("resource", "process")


def down_spells(ctx: Context) -> dict[str, list[tuple[float, float]]]:
    """Per instance, the spells its target did not answer (`up` 0): from the first down
    reading to the first one answering again (the window's end where it never did)."""
    out: dict[str, list[tuple[float, float]]] = {}
    s = ctx.frame.get(TARGET_UP)
    if s is None:
        return out
    t = ctx.frame.times
    for inst in s.instances:
        row = s.row(inst)
        if row is None:
            continue
        down = np.nan_to_num(row, nan=1.0) < 0.5
        if not down.any():
            continue
        edges = np.flatnonzero(np.diff(np.concatenate(([0], down.astype(np.int8), [0]))))
        starts, ends = edges[::2], edges[1::2]
        out[inst] = [
            (float(t[a]), float(t[min(b, t.size - 1)])) for a, b in zip(starts, ends, strict=True)
        ]
    return out
