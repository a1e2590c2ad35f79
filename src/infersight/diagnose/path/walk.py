"""The walk: from what the users felt, down the request path to the changes nothing explains.

Seed §5.2 reads the 02:17 incident this way: the gateway's errors come from the service, the
service's queue from requests held in it, those from a slower vector DB, and that from a
vector DB out of RAM; a slowdown "amplified layer by layer along the request chain". At each
change the relations (`relations/`) say which other changes can have made it: more work
arrived (and from where), less capacity is in service, each unit of work got slower for what
it calls, runs on or is given, or the part stopped answering. The walk follows every such
link; it ends at changes no relation explains. Several ends are several roots.

Only user-facing changes start a walk (`symptoms`); a rule's own evidence can be walked too
(`Walk.extend`), to tell whether what it rests on is explained by an end found elsewhere.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field

from infersight.diagnose.path.change import Change
from infersight.diagnose.path.reader import Reader
from infersight.diagnose.path.relations.registry import relations

Key = tuple[str, str, str]
#: in a loop of changes that explain each other, which is read as its source: what a part was
#: given or ran out of, then what filled, then failures, queues and times
_SOURCE_ORDER = {"saturation": 1, "errors": 2, "waiting": 3, "time": 4, "output": 5}


def key(c: Change) -> Key:
    return (c.node, c.signal, c.instance)


@dataclass(frozen=True)
class Link:
    effect: Change
    cause: Change
    relation: str


@dataclass
class Walk:
    reader: Reader
    symptoms: list[Change]
    #: how surely the starts are an incident: below 1 where the walk set out from symptoms
    #: fainter than one that dates an incident (their score over that floor)
    certainty: float = 1.0
    visited: dict[Key, Change] = field(default_factory=dict)
    #: effect → the links to what can have made it
    links: dict[Key, list[Link]] = field(default_factory=dict)
    #: cause → the links from it (the links read backwards), built once per extension
    _back: dict[Key, list[Link]] | None = field(default=None, init=False, repr=False)
    _effects: dict[Key, frozenset[Key]] = field(default_factory=dict, init=False, repr=False)

    def _from(self) -> dict[Key, list[Link]]:
        if self._back is None:
            back: dict[Key, list[Link]] = {}
            for links in self.links.values():
                for link in links:
                    back.setdefault(key(link.cause), []).append(link)
            self._back = back
        return self._back

    def extend(self, starts: Iterable[Change]) -> None:
        """Walk on from these changes (already visited ones are not read again)."""
        self._back = None
        self._effects.clear()
        todo = deque(starts)
        while todo:
            c = todo.popleft()
            k = key(c)
            if k in self.visited:
                continue
            self.visited[k] = c
            found: dict[Key, Link] = {}
            for rel in relations():
                for cause in rel.explain(self.reader, c):
                    ck = key(cause)
                    if ck != k and ck not in found:
                        found[ck] = Link(c, cause, rel.name)
            self.links[k] = list(found.values())
            todo.extend(link.cause for link in found.values())

    def causes(self, c: Change) -> list[Link]:
        return self.links.get(key(c), [])

    def ends(self, among: Iterable[Change] | None = None) -> list[Change]:
        """The changes reachable from `among` (every one visited when None) that nothing
        explains; of a group that only explains itself (a cycle), its earliest members."""
        starts = list(self.visited.values()) if among is None else list(among)
        reach = self._reach(starts)
        out: dict[Key, Change] = {}
        for comp in self._components(reach):
            outside = {
                key(link.cause)
                for k in comp
                for link in self.links.get(k, [])
                if key(link.cause) not in comp
            }
            if outside:
                continue
            members = [self.visited[k] for k in comp]
            if len(members) > 1:
                # a loop across a part and what it runs on (batches held longer fill the
                # card; a fuller card holds them longer), with no more work from outside: what
                # changed is under the part, on what it runs on
                nodes = {c.node for c in members}
                runs = self.reader.world.runs_on
                bottom = {n for n in nodes if not any(u in nodes for u in runs.get(n, []))}
                if bottom != nodes:
                    members = [c for c in members if c.node in bottom]
                # a loop (requests waiting hold memory; memory full makes requests wait):
                # its source is the resource that filled, before what queued or slowed
                best = min(_SOURCE_ORDER.get(c.facet, 0) for c in members)
                members = [c for c in members if _SOURCE_ORDER.get(c.facet, 0) == best]
            first = min(c.onset for c in members)
            for c in members:
                if c.onset <= first + self.reader.step:
                    out[key(c)] = c
        return list(out.values())

    def explains(self, cause: Change) -> set[Key]:
        """Every visited change `cause` leads to (its effects, theirs, …)."""
        start = key(cause)
        done = self._effects.get(start)
        if done is None:
            back = self._from()
            seen: set[Key] = set()
            todo = [start]
            while todo:
                k = todo.pop()
                for link in back.get(k, []):
                    e = key(link.effect)
                    if e not in seen:
                        seen.add(e)
                        todo.append(e)
            done = self._effects[start] = frozenset(seen)
        return set(done)

    def path(
        self, end: Change, to: Iterable[Change], first: frozenset[str] | None = None
    ) -> list[Link]:
        """The shortest chain of links from `end` up to one of `to` (empty when none); with
        `first`, one whose first link is of these relations."""
        targets = {key(c) for c in to}
        back = self._from()
        prev: dict[Key, Link] = {}
        todo = deque([key(end)])
        seen = {key(end)}
        while todo:
            k = todo.popleft()
            if k in targets and k != key(end):
                chain = []
                while k in prev:
                    chain.append(prev[k])
                    k = key(prev[k].cause)
                return chain[::-1]
            for link in back.get(k, []):
                if first is not None and k == key(end) and link.relation not in first:
                    continue
                e = key(link.effect)
                if e not in seen:
                    seen.add(e)
                    prev[e] = link
                    todo.append(e)
        return []

    def _reach(self, starts: list[Change]) -> set[Key]:
        seen: set[Key] = set()
        todo = [key(c) for c in starts if key(c) in self.visited]
        while todo:
            k = todo.pop()
            if k in seen:
                continue
            seen.add(k)
            todo += [key(link.cause) for link in self.links.get(k, [])]
        return seen

    def _components(self, nodes: set[Key]) -> list[set[Key]]:
        """Strongly connected components of the links among `nodes` (Kosaraju, iterative)."""
        succ = {
            v: [key(link.cause) for link in self.links.get(v, []) if key(link.cause) in nodes]
            for v in nodes
        }
        order: list[Key] = []
        seen: set[Key] = set()
        for root in sorted(nodes):
            if root in seen:
                continue
            seen.add(root)
            stack = [(root, iter(succ[root]))]
            while stack:
                v, it = stack[-1]
                nxt = next((w for w in it if w not in seen), None)
                if nxt is None:
                    order.append(v)
                    stack.pop()
                else:
                    seen.add(nxt)
                    stack.append((nxt, iter(succ[nxt])))
        pred: dict[Key, list[Key]] = {v: [] for v in nodes}
        for v, ws in succ.items():
            for w in ws:
                pred[w].append(v)
        out: list[set[Key]] = []
        done: set[Key] = set()
        for v in reversed(order):
            if v in done:
                continue
            comp = {v}
            done.add(v)
            todo = [v]
            while todo:
                x = todo.pop()
                for y in pred[x]:
                    if y not in done:
                        done.add(y)
                        comp.add(y)
                        todo.append(y)
            out.append(comp)
        return out


def symptoms(r: Reader, least: float) -> list[Change]:
    """What the users felt: user-facing times and errors that got worse, strongly enough to
    be an incident. Where they felt nothing yet, what went wrong strongly enough that the
    window is no healthy one (a target down, a queue a hundred times longer): it is walked
    the same way, so that where it began is named, never nothing."""
    out = []
    for c in r.changes:
        if not c.felt or c.kind in ("absent", "added"):
            continue
        # against the window's own first minutes alone, a change must be as strong as one
        # nobody felt to start a walk: a lab warming up wobbles that much
        floor = r.config.unfelt_min_score if c.weak else least
        if c.bad and c.direction == "up" and c.score >= floor:
            out.append(c)
    if out:
        return out
    strong = r.config.unfelt_min_score
    return [
        c
        for c in r.changes
        if c.bad
        and not c.weak
        and c.score >= strong
        and c.kind not in ("trend", "added", "idle")
        and (c.is_effect or c.facet == "availability")
        and not (c.facet == "saturation" and c.follows_work)
        and not c.is_event
    ]


def walk(r: Reader, least: float) -> Walk:
    """Walk from the user-facing changes at least `least` strong
    (`DiagnoseConfig.symptom_min_score`)."""
    w = Walk(r, symptoms(r, least))
    w.extend(w.symptoms)
    return w
