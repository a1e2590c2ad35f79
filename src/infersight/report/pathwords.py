"""A root's place on the request path, in words: what it did and where the work piled up.

The engine names the path's nodes by id (`service:node-0`, `hop`); a person reads "the service
on node-0" (the words of `diagnose/path/world.py`'s `Node.describe`). For a root the walk found
with a bottleneck, one line says what the root did and where its work piled up (issue 37:
"requests 2.5× since 14:40 (trigger) → the API's workers saturated (bottleneck)"): a trigger
sent more work down the path; a limit named beside a trigger is said to be one, with the root
whose work it could not take; and the remedy goes on to where the work piled up.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from infersight.diagnose.path.world import HOP, Node
from infersight.diagnose.result import RootCause

#: a site's instances named before "and N more"
NAMED_NODES = 3


def node_words(node: str) -> str:
    """ "service:node-0" → "the service on node-0"; "hop" → "the hop between the gateway and
    the engines (…)"; a part the path does not know (a user's own node) → "the reranker rr-0"."""
    if node == HOP:
        return Node(HOP, HOP, "").describe()
    part, _, instance = node.partition(":")
    if not instance:
        return node
    words = Node(node, part, instance).describe()
    return words if words != instance else f"the {part} {instance}"


def nodes_words(nodes: Sequence[str]) -> str:
    """The nodes of a site: "the engine on node-0, node-1 and node-3", "the engine on node-3,
    node-6, node-1 and 5 more"; on a machine (its host and its server) the first part's words."""
    if not nodes:
        return ""
    first = nodes[0]
    part = first.partition(":")[0]
    same = [n for n in dict.fromkeys(nodes) if n.partition(":")[0] == part]
    if len(same) == 1 or first == HOP:
        return node_words(first)
    names = [n.partition(":")[2] for n in same]
    if len(names) > NAMED_NODES + 1:
        listed = f"{', '.join(names[:NAMED_NODES])} and {len(names) - NAMED_NODES} more"
    else:
        listed = f"{', '.join(names[:-1])} and {names[-1]}"
    return node_words(f"{part}:{listed}")


def piled_up(rc: RootCause) -> str:
    """Where the root's work piled up, in words; "" where none stood out or it piled up at the
    root's own nodes (a limit: its remedy is already there)."""
    if not rc.bottleneck or rc.bottleneck in (rc.node, *rc.nodes):
        return ""
    return node_words(rc.bottleneck)


def path_line(rc: RootCause, lead: str, roots: Mapping[str, RootCause]) -> str:
    """One line: where the root is, what it did (`lead`: its first figure and since when), where
    the work piled up, and the limits named beside it that its work ran into; "" for a root
    with none of these.

    "the cache cache-0 sent more work: dependency.cache_hit_ratio 96% → 60% since 02:18
    (trigger) → piled up at the retrieval backend vectordb-0 (bottleneck)"
    """
    limits = sorted(r.rank for r in roots.values() if r.triggered_by == rc.hypothesis)
    if not rc.bottleneck and not rc.triggered_by and not limits:
        return ""
    where = _site(rc)
    if rc.trigger:
        head = f"{where} sent more work" if where else "it sent more work"
        head += f": {lead} (trigger)" if lead else " (trigger)"
    else:
        head = where or "the root"
        if rc.triggered_by:
            sender = roots.get(rc.triggered_by)
            by = f"#{sender.rank}" if sender is not None else rc.triggered_by
            src = _site(sender) if sender is not None else ""
            head += f", a limit the work of {by}" + (f" ({src})" if src else "") + " ran into"
        head += f": {lead}" if lead else ""
    steps = [head]
    if rc.bottleneck:
        there = piled_up(rc)
        steps.append(f"piled up {f'at {there}' if there else 'there'} (bottleneck)")
    if limits:
        word = "limit" if len(limits) == 1 else "limits"
        steps.append(f"ran into the {word} " + ", ".join(f"#{k}" for k in limits))
    return " → ".join(steps)


def _site(rc: RootCause) -> str:
    return nodes_words(rc.nodes or ((rc.node,) if rc.node else ()))
