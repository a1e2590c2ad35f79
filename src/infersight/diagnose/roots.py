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

from infersight.diagnose import chain as chain_mod
from infersight.diagnose.kb import KnowledgeBase, Rule
from infersight.diagnose.path import HOP, Change, Link, Walk, key
from infersight.diagnose.path.walk import Key
from infersight.diagnose.path.world import World, node_id
from infersight.diagnose.placing import beside_triggers, claim, fold, under_load
from infersight.diagnose.result import HypothesisResult
from infersight.diagnose.root_site import MORE_WORK, PathRoot, Resolution, Site


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
    for site in group_sites(w, ends):
        _add_root(w, res, site, sites, results, graph, causes, unnamed_min_score)
    fold(res, graph)
    claim(res, sites, w.reader.step)
    felt = {key(c): c.score for c in w.symptoms}
    for i, pr in enumerate(res.roots):
        keys = {k for e in pr.site.ends for k in w.explains(e)}
        # a symptom nothing explains, where no rule names anything, is no cause found: it
        # goes after every root that explains something. So do user-facing changes that
        # only explain each other (a P99 that raises the mean): the walk found nothing under
        if not pr.named and all(e.felt for e in pr.site.ends):
            keys = set()
        elif pr.named or not keys <= {key(e) for e in pr.site.ends}:
            keys |= {key(e) for e in pr.site.ends}
        reach = max((felt[k] for k in keys if k in felt), default=0.0)
        res.roots[i] = dataclasses.replace(pr, reach=reach)
    named = {r.id for r in res.roots if r.named}
    reached = {r.id: {k for e in r.site.ends for k in w.explains(e)} for r in res.roots}
    walked = {k[0] for k in w.visited}
    upstream: dict[str, list[Change]] = {}
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
            found = w.ends(extra)
            mine = {site_key(w, c) for c in found}
            known = {r.id: {site_key(w, c) for c in r.site.ends} for r in res.roots}
            if mine and mine <= set().union(*known.values()):
                res.explained[rid] = [r for r, ks in known.items() if mine & ks]
                continue
            if found and not any(c.node in nodes for c in found):
                upstream[rid] = found
                continue
        res.outside.append(rid)
    # a cause nothing the users felt led to, whose own changes are all explained off its site
    # (a restart and a reload after the card's Xid errors): its premises are consequences, and
    # where they began is the root, named or not
    for rid, found in upstream.items():
        for site in group_sites(w, found):
            got = _add_root(w, res, site, sites, results, graph, causes, unnamed_min_score)
            if got is not None and got != rid:
                res.explained.setdefault(rid, []).append(got)
        if rid not in res.explained:
            res.outside.append(rid)
    named = {r.id for r in res.roots if r.named}
    res.outside = [r for r in res.outside if r not in named]
    under_load(res, causes, sites, graph)
    beside_triggers(w, res, causes, sites)
    return res


def _add_root(
    w: Walk,
    res: Resolution,
    site: Site,
    sites: Mapping[str, set[str]],
    results: Mapping[str, HypothesisResult],
    graph: Mapping[str, list[str]],
    causes: Mapping[str, Rule],
    unnamed_min_score: float,
) -> str | None:
    """The site as a root of the resolution, named by the cause that sits there or as a
    change no rule names; None where it is too faint to be one."""
    name = _label(w, site, sites, results, graph, causes)
    if name is None and not _notable(site, unnamed_min_score, w.reader.config.unfelt_min_score):
        return None
    neck, trig, via = _route(w, site, sites.get(name or "", set()))
    rid = name or unnamed_id(site)
    old = next((r for r in res.roots if r.id == rid), None)
    if old is not None:  # one rule names two sites (a vector DB and its host)
        if set(site.nodes) <= set(old.site.nodes):
            return rid
        merged = Site(old.site.part, old.site.nodes + site.nodes, old.site.ends + site.ends)
        res.roots[res.roots.index(old)] = PathRoot(
            rid, merged, old.named, old.bottleneck, old.trigger, old.via
        )
        return rid
    res.roots.append(PathRoot(rid, site, name is not None, neck, trig, via))
    return rid


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
