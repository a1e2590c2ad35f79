"""What a relation reads: the world, the changes at each node, and when a cause may precede."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from infersight.diagnose.path.changes import Change, by_node
from infersight.diagnose.path.config import PathConfig
from infersight.diagnose.path.world import World, node_id, peers
from infersight.signals import all_signals


@dataclass
class Reader:
    world: World
    changes: list[Change]
    config: PathConfig
    roles: Mapping[str, str]
    step: float
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
        """A cause does not start after its effect, beyond what dating can tell apart."""
        return cause.onset <= effect.onset + max(self.config.onset_slack_s, 2 * self.step)

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
