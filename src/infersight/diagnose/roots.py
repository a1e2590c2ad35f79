"""Root causes where the request-path walk ends: rules name the mechanism there.

The walk (`diagnose/path/`) follows the users' symptom down the path to the changes nothing
explains (its ends). Ends on one part of the fleet (one node, or the same part of every
replica of one role) are one site; each site is one root. A confirmed cause whose `at` parts
hold the site names it (of several, one another rule does not explain, then the most
confident); a site no rule names is a root of its own, "a change at NODE", with its earliest
and largest changes and the measurements that would tell the mechanisms of that part apart.

Every other confirmed cause is a consequence, generically: one a root explains through the
rules' `explains`, or one whose part the walk passed through (the vector DB slowed because the
cache in front of it missed more: its premises are the cache's consequences). A confirmed cause
the walk never reaches and that leads to no end of its own (a leak with no symptom yet) keeps
the rules' own verdict, after the walk's roots.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from infersight.diagnose import chain as chain_mod
from infersight.diagnose.kb import KnowledgeBase, Rule
from infersight.diagnose.path import HOP, Change, Link, Walk, key
from infersight.diagnose.path.walk import Key
from infersight.diagnose.path.world import World, node_id
from infersight.diagnose.result import HypothesisResult

#: the layer (seed §2.1) a part of the path belongs to
LAYER_OF = {
    "gateway": "access",
    "hop": "service",
    "service": "service",
    "engine": "inference",
    "gpu": "inference",
    "cache": "dependency",
    "retrieval": "dependency",
    "host": "infrastructure",
}
#: relations by which an end sent more work downstream (its root is a trigger)
MORE_WORK = frozenset({"more work", "demand", "misses", "a peer's share"})


@dataclass(frozen=True)
class Site:
    """Ends on one part of the fleet: one node, or that part on replicas of one role."""

    part: str
    nodes: tuple[str, ...]
    ends: tuple[Change, ...]

    @property
    def onset(self) -> float:
        return min(c.onset for c in self.ends)

    @property
    def instances(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(c.instance for c in self.ends if c.node != HOP))


@dataclass(frozen=True)
class PathRoot:
    """A root the walk found: the rule that names it (or `change@NODE`), where, and how it
    reaches the symptom."""

    id: str
    site: Site
    named: bool
    bottleneck: str = ""  # the node where the work piled up, on the way to the symptom
    trigger: bool = False  # it sent more work down the path (traffic, misses, a lost share)
    via: tuple[str, ...] = ()  # nodes from the root to the symptom
    #: a limit named beside the root that sent the work it could not take (`under_load`)
    triggered_by: str = ""
    #: the strongest user-facing change it explains (0: a forecast, or nothing felt)
    reach: float = 0.0


@dataclass
class Resolution:
    roots: list[PathRoot] = field(default_factory=list)
    #: confirmed cause → the roots that explain it
    explained: dict[str, list[str]] = field(default_factory=dict)
    #: confirmed causes the walk did not reach, which stand on the rules' own verdict
    outside: list[str] = field(default_factory=list)
    #: (cause, root): the root's consequences on the walk reach the cause's parts
    on_path: set[tuple[str, str]] = field(default_factory=set)


def sites_of(world: World, rule: Rule, h: HypothesisResult) -> set[str]:
    """The nodes a confirmed rule speaks of: its `at` parts on the instances its evidence
    names (every node of its evidence where it declares none)."""
    insts = set(h.instances) or {e.instance for e in h.evidence if e.supports}
    out: set[str] = set()
    if not rule.at:
        for e in h.evidence:
            n = world.node_of(e.signal, e.instance) if e.supports else None
            if n is not None:
                out.add(n)
        return out & set(world.nodes)
    for p in rule.at:
        if p == "hop":
            out.add(HOP)
        for i in insts:
            if p == "instance":
                out |= {node_id(q, i) for q in world.parts.get(i, ())}
            else:
                out.add(node_id(p, i))
    return out & set(world.nodes)


_REPLICA = frozenset({"service", "engine", "gpu"})


def site_key(w: Walk, c: Change) -> tuple[str, str]:
    """The site a change belongs to. On the replicas, a part on every instance of a role (the
    GPUs of the fleet, its engines, their hosts): which part matters there, and a fleet-wide
    change is one. Elsewhere the machine (a vector DB and the host it has to itself)."""
    world = w.reader.world
    node = world.nodes[c.node]
    if node.part == "hop":
        return ("hop", "")
    if not world.parts.get(node.instance, set()) & _REPLICA:
        return ("", node.instance)
    return (node.part, w.reader.roles.get(node.instance, "") or node.instance)


def group_sites(w: Walk, ends: Iterable[Change]) -> list[Site]:
    """Ends by site (`site_key`): a machine's site holds all its parts, the ends' first. On
    one site, more work arriving and what changed of the part itself (a pool raised as the
    bursts came) are two roots: a trigger, and what it met."""
    world = w.reader.world
    groups: dict[tuple[str, str, bool], list[Change]] = {}
    for c in ends:
        groups.setdefault((*site_key(w, c), c.is_work), []).append(c)
    out = []
    for (part, inst, _), cs in groups.items():
        cs = sorted(cs, key=lambda c: (c.onset, -c.score))
        nodes = list(dict.fromkeys(c.node for c in cs))
        if not part:  # a machine: every part of it, the one it is for first
            part = world.primary(inst)
            mine = sorted(n for n, node in world.nodes.items() if node.instance == inst)
            nodes += [n for n in mine if n not in nodes]
        out.append(Site(part, tuple(nodes), tuple(cs)))
    return sorted(out, key=lambda s: (s.onset, -max(c.score for c in s.ends)))


def own_signals(w: Walk, site: Site) -> set[str]:
    """What went wrong at the site of its own: its ends, and the effects they had on the same
    machines (a vector DB slower for the CPU its host ran out of). A pool that stopped filling
    because no work came is no sign of a pool too small, and a driver that something else
    explains is no trigger: traffic that rose because a peer failed is the failure's."""
    ends = _keys(site)
    keys = set(ends)
    for c in site.ends:
        keys |= w.explains(c)
    here = set(site.nodes)
    machines = {c.instance for c in site.ends}
    return {
        k[1]
        for k in keys
        if k in ends
        or (k[0] in here and k[2] in machines and w.visited[k].bad and w.visited[k].is_effect)
    }


def _keys(site: Site) -> set[Key]:
    return {key(c) for c in site.ends}


def _label(
    w: Walk,
    site: Site,
    candidates: Mapping[str, set[str]],
    results: Mapping[str, HypothesisResult],
    graph: Mapping[str, list[str]],
    rules: Mapping[str, Rule],
) -> str | None:
    """The confirmed cause that names the site: one whose `at` holds a node of it and whose
    own signature (its `signals`) is among what changed there unexplained (a rule confirmed
    on the site's consequences names a neighbour, not this), not explained by another such
    one, the most confident."""
    ended = own_signals(w, site)
    names = [
        rid
        for rid, nodes in candidates.items()
        if nodes & set(site.nodes) and (not rules[rid].signals or set(rules[rid].signals) & ended)
    ]
    back = chain_mod.explained_by(graph)
    free = [r for r in names if not any(b in names and b != r for b in back.get(r, []))]
    pick = free or names
    if not pick:
        return None
    return max(pick, key=lambda r: (results[r].confidence, r))


def _route(w: Walk, site: Site, area: set[str]) -> tuple[str, bool, tuple[str, ...]]:
    """(bottleneck, trigger, via) for a site: along the shortest chain of links from the site
    to the symptom (one by which the site sent more work, where there is one), the first node
    past the root's area (the site, and the parts its rule names) where work piled up: it
    arrived there as more work, or its queue or busy share grew."""
    here = set(site.nodes) | area
    starts = [c for c in w.visited.values() if c.node in here]
    best: list[Link] = []
    for want in (MORE_WORK, None):  # the way it sent more work down the path, if it did
        for c in starts:
            chain = w.path(c, w.symptoms, want)
            if chain and (not best or len(chain) < len(best)):
                best = chain
        if best:
            break
    if not best:
        return "", False, site.nodes[:1]
    trigger = any(link.relation in MORE_WORK and link.cause.node in here for link in best)
    via = [best[0].cause.node]
    for link in best:
        if link.effect.node not in via:
            via.append(link.effect.node)
    neck = ""
    for link in best:
        n = link.effect.node
        if n in here:
            continue
        loaded = link.relation in MORE_WORK and not n.startswith("gateway:")
        # the hop without metrics shows its queue only as the time it added
        piled = [
            c
            for c in w.reader.at_node.get(n, [])
            if c.bad
            and c.direction == "up"
            and (c.facet in ("waiting", "saturation") or c.kind == "added")
        ]
        if loaded or piled:
            neck = n
            break
    return neck, trigger, tuple(via)


def resolve(
    w: Walk,
    kb: KnowledgeBase,
    results: Mapping[str, HypothesisResult],
    confirmed: Mapping[str, Rule],
    graph: Mapping[str, list[str]],
    unnamed_min_score: float,
) -> Resolution:
    """The walk's roots, named by the rules where they can be, and the fate of every other
    confirmed cause."""
    world = w.reader.world
    causes = {rid: r for rid, r in confirmed.items() if r.kind == "cause"}
    sites = {rid: sites_of(world, r, results[rid]) for rid, r in causes.items()}
    res = Resolution()
    # a forecast is a symptom to come: what grows toward it is walked as the users' is
    ahead = [
        c
        for rid, r in confirmed.items()
        if r.kind == "forecast"
        for c in _rule_changes(w, results[rid])
    ]
    w.extend(ahead)
    ends = w.ends(w.symptoms) + [
        e for e in w.ends(ahead) if key(e) not in {key(x) for x in w.ends(w.symptoms)}
    ]
    if not ends:
        res.outside = list(causes)
        return res
    for site in group_sites(w, ends):
        name = _label(w, site, sites, results, graph, causes)
        if name is None and not _notable(site, unnamed_min_score, w.reader.config.unfelt_min_score):
            continue
        neck, trig, via = _route(w, site, sites.get(name or "", set()))
        rid = name or unnamed_id(site)
        old = next((r for r in res.roots if r.id == rid), None)
        if old is not None:  # one rule names two sites (a vector DB and its host)
            merged = Site(old.site.part, old.site.nodes + site.nodes, old.site.ends + site.ends)
            res.roots[res.roots.index(old)] = PathRoot(
                rid, merged, old.named, old.bottleneck, old.trigger, old.via
            )
            continue
        res.roots.append(PathRoot(rid, site, name is not None, neck, trig, via))
    _fold(res, graph)
    _claim(res, sites)
    felt = {key(c): c.score for c in w.symptoms}
    for i, pr in enumerate(res.roots):
        keys = {k for e in pr.site.ends for k in w.explains(e)}
        # a symptom nothing explains, where no rule names anything, is no cause found: it
        # goes after every root that explains something
        if pr.named or not keys <= {key(e) for e in pr.site.ends}:
            keys |= {key(e) for e in pr.site.ends}
        reach = max((felt[k] for k in keys if k in felt), default=0.0)
        res.roots[i] = dataclasses.replace(pr, reach=reach)
    named = {r.id for r in res.roots if r.named}
    reached = {r.id: {k for e in r.site.ends for k in w.explains(e)} for r in res.roots}
    walked = {k[0] for k in w.visited}
    for rid in causes:
        if rid in named:
            continue
        by_rules = [r for r in named if rid in chain_mod.reach(graph, r)]
        nodes = sites[rid]
        by_site = [r.id for r in res.roots if nodes & set(r.site.nodes)]
        by_path = [r for r, keys in reached.items() if nodes & {k[0] for k in keys}]
        if by_rules or by_site or by_path:
            res.explained[rid] = list(dict.fromkeys(by_rules + by_site + by_path))
            res.on_path |= {(rid, r) for r in by_path}
            continue
        if nodes & walked:
            res.explained[rid] = [r.id for r in res.roots]
            continue
        extra = _rule_changes(w, results[rid])
        if extra:
            w.extend(extra)
            mine = {site_key(w, c) for c in w.ends(extra)}
            known = {r.id: {site_key(w, c) for c in r.site.ends} for r in res.roots}
            if mine and mine <= set().union(*known.values()):
                res.explained[rid] = [r for r, ks in known.items() if mine & ks]
                continue
        res.outside.append(rid)
    _under_load(res, causes, sites, graph)
    _beside_triggers(w, res, causes, sites)
    return res


def _beside_triggers(
    w: Walk, res: Resolution, causes: Mapping[str, Rule], sites: Mapping[str, set[str]]
) -> None:
    """A limit named as a root of its own where a trigger's work also reached it (a batch cap
    past the knee under the same burst) goes with that trigger, before it: the limit is the
    fix."""
    for i, lim in enumerate(res.roots):
        rule = causes.get(lim.id)
        if rule is None or not rule.under_load or lim.triggered_by:
            continue
        mine = sites.get(lim.id, set()) | set(lim.site.nodes)
        for t in res.roots:
            if t is lim or not t.trigger:
                continue
            reached = {k[0] for e in t.site.ends for k in w.explains(e)}
            if reached & mine:
                res.roots[i] = dataclasses.replace(lim, triggered_by=t.id)
                break


def _under_load(
    res: Resolution,
    causes: Mapping[str, Rule],
    sites: Mapping[str, set[str]],
    graph: Mapping[str, list[str]],
) -> None:
    """A limit (`under_load`) that the work of a root piled up against is named with it: the
    root's consequences on the walk reach the limit's parts, and the limit turned the work into
    the outage (an unbounded queue under a surge, a batch cap past the knee). Not where the
    rules say the root explains it (a pool that admits everything makes the batches large: the
    batch cap is not at fault)."""
    for rid, by in list(res.explained.items()):
        if not causes[rid].under_load:
            continue
        if any(rid in chain_mod.reach(graph, r) for r in by if r in causes):
            continue
        sent = [r for r in res.roots if r.id in by and (rid, r.id) in res.on_path]
        # what sent the work first (a trigger), then what reaches most of what users felt
        hit = min(sent, key=lambda r: (not r.trigger, -r.reach), default=None)
        if hit is None:
            continue
        nodes = tuple(sorted(sites[rid]))
        site = Site(hit.site.part, nodes, hit.site.ends)
        res.roots.insert(
            res.roots.index(hit),
            PathRoot(
                rid, site, True, nodes[0], False, hit.via, triggered_by=hit.id, reach=hit.reach
            ),
        )
        del res.explained[rid]


def _claim(res: Resolution, sites: Mapping[str, set[str]]) -> None:
    """A site no rule names, wholly within the parts and instances a named root's rule speaks
    of, is that root's: a cascade of OOMs names the cards' memory and the engines' batches on
    those machines alike."""
    for u in [r for r in res.roots if not r.named]:
        owner = next(
            (r for r in res.roots if r.named and set(u.site.nodes) <= sites.get(r.id, set())),
            None,
        )
        if owner is None:
            continue
        i = res.roots.index(owner)
        site = Site(owner.site.part, owner.site.nodes + u.site.nodes, owner.site.ends + u.site.ends)
        res.roots[i] = dataclasses.replace(owner, site=site)
        res.roots.remove(u)


def _fold(res: Resolution, graph: Mapping[str, list[str]]) -> None:
    """A named root another named root explains by the rules (a pool that admits everything
    explains the cards' OOMs) is that root's consequence: its site joins the other's. Not into
    a root that is only more work arriving: the walk follows work itself, and what it left
    unexplained (a queue on replicas that got no more of it) the work did not cause."""
    for b in [r for r in res.roots if r.named]:
        named = [r for r in res.roots if r.named]
        if b not in named:
            continue
        by = [
            a
            for a in named
            if a is not b
            and not all(c.is_work for c in a.site.ends)
            and b.id in chain_mod.reach(graph, a.id)
            and a.id not in chain_mod.reach(graph, b.id)
        ]
        if not by:
            continue
        a = by[0]
        i = next(k for k, r in enumerate(res.roots) if r.id == a.id)
        cur = res.roots[i]
        site = Site(cur.site.part, cur.site.nodes + b.site.nodes, cur.site.ends + b.site.ends)
        res.roots[i] = PathRoot(cur.id, site, True, cur.bottleneck, cur.trigger, cur.via)
        res.roots = [r for r in res.roots if r.id != b.id]
        res.explained.setdefault(b.id, []).append(a.id)


def _notable(site: Site, least: float, strong: float) -> bool:
    """Whether a site no rule names is worth a root of its own: a change detection found, of
    at least `least`; a shift of the medians alone (a step) must be as strong as `strong`: it
    links what detection found, and on its own is no finding."""
    return any(c.score >= (strong if c.kind in ("step", "added") else least) for c in site.ends)


def _rule_changes(w: Walk, h: HypothesisResult) -> list[Change]:
    want = {(e.signal, e.instance) for e in h.evidence if e.supports}
    return [c for c in w.reader.changes if (c.signal, c.instance) in want]


def unnamed_id(site: Site) -> str:
    first = site.nodes[0]
    return f"change@{first}" if len(site.nodes) == 1 else f"change@{first}+{len(site.nodes) - 1}"
