"""Where named roots go relative to each other once the walk's sites are named: a root the
rules say another explains joins that one (`fold`), a site no rule names inside a named root's
parts is its (`claim`), and a limit that a root's work piled up against is named beside that
root, first (`under_load`, `beside_triggers`): the limit is the fix."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from infersight.diagnose import chain as chain_mod
from infersight.diagnose.kb import Rule
from infersight.diagnose.path import Walk
from infersight.diagnose.root_site import PathRoot, Resolution, Site


def beside_triggers(
    w: Walk, res: Resolution, causes: Mapping[str, Rule], sites: Mapping[str, set[str]]
) -> None:
    """A limit named as a root of its own where a trigger's work also reached it (a batch cap
    past the knee under the same burst) goes with that trigger, before it: the limit is the
    fix. Only a trigger whose work reached what the users felt (a TTFT that rose on its own,
    nothing found under it, sent no work)."""
    for i, lim in enumerate(res.roots):
        rule = causes.get(lim.id)
        if rule is None or not rule.under_load or lim.triggered_by:
            continue
        mine = sites.get(lim.id, set()) | set(lim.site.nodes)
        for t in res.roots:
            if t is lim or not t.trigger or not t.reach:
                continue
            reached = {k[0] for e in t.site.ends for k in w.explains(e)}
            if reached & mine:
                res.roots[i] = dataclasses.replace(lim, triggered_by=t.id)
                break


def under_load(
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


def claim(res: Resolution, sites: Mapping[str, set[str]], step: float) -> None:
    """A site no rule names, wholly within the parts and instances a named root's rule speaks
    of, is that root's: a cascade of OOMs names the cards' memory and the engines' batches on
    those machines alike. A root that is only more work arriving claims only what began on
    machines its work had already reached (within a scrape step): the walk follows work itself,
    and a queue on a replica that got no more of it, or got it later, the work did not cause."""
    for u in [r for r in res.roots if not r.named]:
        owner = next(
            (
                r
                for r in res.roots
                if r.named
                and set(u.site.nodes) <= sites.get(r.id, set())
                and (not all(c.is_work for c in r.site.ends) or _after_work(u.site, r.site, step))
            ),
            None,
        )
        if owner is None:
            continue
        i = res.roots.index(owner)
        site = Site(owner.site.part, owner.site.nodes + u.site.nodes, owner.site.ends + u.site.ends)
        res.roots[i] = dataclasses.replace(owner, site=site)
        res.roots.remove(u)


def _after_work(site: Site, work: Site, step: float) -> bool:
    """Every change of `site` began once more work had reached its machine."""
    came: dict[str, float] = {}
    for c in work.ends:
        came[c.instance] = min(came.get(c.instance, c.onset), c.onset)
    return all(c.instance in came and c.onset + step >= came[c.instance] for c in site.ends)


def fold(res: Resolution, graph: Mapping[str, list[str]]) -> None:
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
