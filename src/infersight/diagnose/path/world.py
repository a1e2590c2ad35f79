"""The request path as a graph, assembled from what is scraped (seed §2.1–2.3, §5.2).

Every canonical signal says which part of the path it describes (`part` in signals.yaml):
the gateway, the serving process (`service`), the model's execution (`engine`), a GPU, a
host, a cache, a retrieval backend. A node is one part on one instance (`retrieval:vdb-0`,
`gpu:node-3`), the instance being the machine identity the sources already joined across
exporters. Edges are of three kinds, built from the roles present, never written per stack:

* `calls`: who sends work to whom. The gateway calls the front of the service: a service
  that is not a model replica (an API in front of the engines, a batcher of its own but no
  GPU) where one is scraped, else a
  virtual `hop` standing for the API the stack runs without metrics, else the engines' own
  front. The front calls the engines, the caches and the retrieval backends; an engine's own
  front calls them too where there is no API in front (one process serves and retrieves).
* `misses`: a cache sends what it misses on to the retrieval backends behind it.
* `runs_on`: an engine (and the service that serves through it) runs on its instance's GPU
  and host; every other part on its host.
  The virtual hop runs on the hosts no other part claims (the API's machines, scraped by
  node_exporter alone).

A user may add nodes and edges in a small YAML file (`topology.py`, `--path-file`): an
embedding service, a reranker, a second cache.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from fnmatch import fnmatchcase

import numpy as np

from infersight.frame import MetricFrame
from infersight.signals import all_signals

HOP = "hop"
#: the part that stands for a whole instance (its `up`, an exporter's own up flag) goes to
#: the first of these the instance has
_PRIMARY = ("service", "cache", "retrieval", "gateway", "engine", "gpu", "host")
_DEPENDENCIES = ("cache", "retrieval")


def node_id(part: str, instance: str) -> str:
    return HOP if part == HOP else f"{part}:{instance}"


@dataclass(frozen=True)
class Node:
    id: str
    part: str
    instance: str  # "" for the virtual hop

    def describe(self) -> str:
        """How a person reads it: `the cache redis-0`, `the GPU of node-3`."""
        words = {
            "gateway": "the gateway {}",
            "service": "the service on {}",
            "engine": "the engine on {}",
            "gpu": "the GPU of {}",
            "host": "the host {}",
            "cache": "the cache {}",
            "retrieval": "the retrieval backend {}",
        }
        if self.part == HOP:
            return "the hop between the gateway and the engines (the API, without metrics)"
        return words.get(self.part, "{}").format(self.instance)


@dataclass
class World:
    """Nodes by id and the three kinds of edges; `parts` says which parts each instance has."""

    nodes: dict[str, Node] = field(default_factory=dict)
    calls: dict[str, list[str]] = field(default_factory=dict)
    misses: dict[str, list[str]] = field(default_factory=dict)
    runs_on: dict[str, list[str]] = field(default_factory=dict)
    parts: dict[str, set[str]] = field(default_factory=dict)
    #: node → the facets it has readable series of (what can be asked of it at all)
    facets: dict[str, set[str]] = field(default_factory=dict)
    #: node → the signals it has readable series of
    signals: dict[str, set[str]] = field(default_factory=dict)
    #: every edge added, for `add_edge` to keep each once without scanning its list
    _edges: set[tuple[str, str, str]] = field(default_factory=set, repr=False)
    _back: dict[str, dict[str, list[str]]] = field(default_factory=dict, repr=False)

    def has(self, node: str, facet: str) -> bool:
        return facet in self.facets.get(node, set())

    def node_of(self, signal: str, instance: str) -> str | None:
        """The node a signal's series on an instance describes (None for an unknown signal)."""
        sig = all_signals().get(signal)
        if sig is None:
            return None
        part: str = sig.part
        if part == "instance":
            part = self.primary(instance)
        return node_id(part, instance)

    def primary(self, instance: str) -> str:
        have = self.parts.get(instance, set())
        return next((p for p in _PRIMARY if p in have), "host")

    def _into(self, kind: str) -> dict[str, list[str]]:
        """Edges of `kind` read backwards (target → sources, in the order they were added),
        built once after the last edge was added: a fleet of a thousand asks per node."""
        back = self._back.get(kind)
        if back is None:
            table = {"calls": self.calls, "misses": self.misses, "runs_on": self.runs_on}[kind]
            back = {}
            for a, bs in table.items():
                for b in bs:
                    back.setdefault(b, []).append(a)
            self._back[kind] = back
        return back

    def callers(self, node: str) -> list[str]:
        return list(self._into("calls").get(node, []))

    def senders_of_misses(self, node: str) -> list[str]:
        return list(self._into("misses").get(node, []))

    def users_of(self, resource: str) -> list[str]:
        """The nodes that run on a GPU or host."""
        return list(self._into("runs_on").get(resource, []))

    def of_part(self, part: str) -> list[str]:
        return [n.id for n in self.nodes.values() if n.part == part]

    def ensure(self, node: str) -> None:
        """A node a change names that no readable series made (a part whose every series
        stopped before the window: its absence is the change): added on its own, unlinked."""
        if node not in self.nodes and node != HOP:
            part, _, inst = node.partition(":")
            self.nodes[node] = Node(node, part, inst)
            self.parts.setdefault(inst, set()).add(part)

    def add_edge(self, kind: str, a: str, b: str) -> None:
        table = {"calls": self.calls, "misses": self.misses, "runs_on": self.runs_on}[kind]
        got = table.setdefault(a, [])
        if b != a and (kind, a, b) not in self._edges:
            self._edges.add((kind, a, b))
            self._back.pop(kind, None)
            got.append(b)


_Seen = dict[tuple[str, str], set[str]]


def _parts(frame: MetricFrame) -> tuple[dict[str, set[str]], _Seen, _Seen]:
    """instance → the parts its readable series describe ("instance" flags left out), and
    (part, instance) → the facets, and the signals, of those series."""
    known = all_signals()
    out: dict[str, set[str]] = {}
    facets: _Seen = {}
    names: _Seen = {}
    for name, s in frame.series.items():
        sig = known.get(name)
        if sig is None:
            continue
        seen = np.any(~np.isnan(s.values), axis=1) if s.values.size else np.zeros(0, bool)
        for inst, ok in zip(s.instances, seen, strict=True):
            have = out.setdefault(inst, set())
            if ok and sig.part != "instance":
                have.add(sig.part)
                facets.setdefault((sig.part, inst), set()).add(sig.facet)
                names.setdefault((sig.part, inst), set()).add(name)
    return out, facets, names


def build_world(frame: MetricFrame, extra: Iterable[tuple[str, str, str]] = ()) -> World:
    """The path of this frame; `extra`: (kind, from, to) edges a user declared."""
    have, facets, names = _parts(frame)
    w = World(parts=have)
    w.facets = {node_id(p, i): f for (p, i), f in facets.items()}
    w.signals = {node_id(p, i): f for (p, i), f in names.items()}
    for inst, ps in w.parts.items():
        for p in ps:
            w.nodes[node_id(p, inst)] = Node(node_id(p, inst), p, inst)
        if not ps:  # only an up flag: the machine as a host
            w.nodes[node_id("host", inst)] = Node(node_id("host", inst), "host", inst)
            ps.add("host")

    def having(part: str) -> list[str]:
        return sorted(i for i, ps in w.parts.items() if part in ps)

    # the model's replicas run on GPUs; a service with a batcher of its own but no card (an
    # API embedding on its CPU) is in front of them. Where no card is scraped at all, every
    # service with an engine is a replica
    on_cards = [i for i in having("service") if {"engine", "gpu"} <= w.parts[i]]
    engines = on_cards or [i for i in having("service") if "engine" in w.parts[i]]
    front = [i for i in having("service") if i not in engines]
    # a dependency scraped on its own is a server every caller reaches; one on a replica's
    # own instance is that replica's view of it (its cache's hits), reached by it alone
    deps = [
        node_id(p, i)
        for p in _DEPENDENCIES
        for i in having(p)
        if not w.parts[i] & {"service", "engine"}
    ]

    def own(i: str) -> list[str]:
        return [node_id(p, i) for p in _DEPENDENCIES if p in w.parts[i]]

    replicas = [node_id("service", i) for i in engines]
    if front:
        entry = [node_id("service", i) for i in front]
    elif having("gateway"):
        w.nodes[HOP] = Node(HOP, HOP, "")
        entry = [HOP]
    else:
        entry = []
    for g in having("gateway"):
        # a proxy on a serving instance is its sidecar: it forwards to that instance alone
        side = node_id("service", g) if "service" in w.parts[g] else None
        for e in [side] if side else entry or replicas:
            w.add_edge("calls", node_id("gateway", g), e)
    for e in entry:
        for b in replicas + deps + (own(w.nodes[e].instance) if e != HOP else []):
            w.add_edge("calls", e, b)
    for i in front:
        if "engine" in w.parts[i]:  # its own batcher
            w.add_edge("calls", node_id("service", i), node_id("engine", i))
    for i in engines:
        if not front:
            for d in deps + own(i):
                w.add_edge("calls", node_id("service", i), d)
        w.add_edge("calls", node_id("service", i), node_id("engine", i))
    # a replica that counts its own lookups (its cache's hits, its searches' time) reads the
    # cache and the retrieval servers where they are scraped
    for part in _DEPENDENCIES:
        servers = [i for i in having(part) if not w.parts[i] & {"service", "engine"}]
        for i in having(part):
            if i not in servers:
                for srv in servers:
                    w.add_edge("calls", node_id(part, i), node_id(part, srv))
    # a miss goes to retrieval: a replica's own cache view to its own retrieval view, a cache
    # server to the retrieval servers (to every retrieval view where no server is scraped)
    search = [r for r in having("retrieval") if not w.parts[r] & {"service", "engine"}]
    for c in having("cache"):
        mine = w.parts[c] & {"service", "engine"} and "retrieval" in w.parts[c]
        for r in [c] if mine else search or having("retrieval"):
            w.add_edge("misses", node_id("cache", c), node_id("retrieval", r))
    for inst, ps in w.parts.items():
        for p in ps - {"host", "gpu"}:
            if "host" in ps:
                w.add_edge("runs_on", node_id(p, inst), node_id("host", inst))
        if "engine" in ps and "gpu" in ps:
            # the service and its engine are one process's two faces: it serves on that card
            for p in ("engine", "service"):
                if p in ps:
                    w.add_edge("runs_on", node_id(p, inst), node_id("gpu", inst))
    if HOP in w.nodes:
        for inst, ps in w.parts.items():
            if ps <= {"host"}:
                w.add_edge("runs_on", HOP, node_id("host", inst))
    for kind, a, b in extra:
        for x in _declared(w, a):
            for y in _declared(w, b):
                if x != y:
                    w.add_edge(kind, x, y)
    return w


def _declared(w: World, node: str) -> list[str]:
    """The nodes a declared one stands for (`topology.py`): every node of its part whose
    instance matches a pattern; a literal node, added where nothing scraped it."""
    part, _, inst = node.partition(":")
    if node != HOP and any(ch in inst for ch in "*?["):
        return sorted(
            n.id for n in w.nodes.values() if n.part == part and fnmatchcase(n.instance, inst)
        )
    if node not in w.nodes:
        w.nodes[node] = Node(node, part, inst)
        if node != HOP:
            w.parts.setdefault(inst, set()).add(part)
    return [node]


def peers(world: World, node: str, roles: Mapping[str, str]) -> list[str]:
    """Nodes of the same part on instances of the same role (the replicas beside it)."""
    me = world.nodes.get(node)
    if me is None or not me.instance:
        return []
    role = roles.get(me.instance, "")
    return [
        n.id
        for n in world.nodes.values()
        if n.part == me.part and n.id != node and roles.get(n.instance, "") == role
    ]
