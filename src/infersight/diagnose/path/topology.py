"""What a user declares of the request path that nothing scraped says: a small YAML file of
edges, read by `infersight diagnose --path-file` and `serve`'s `path_file`.

    # path.yaml
    calls:                                  # who sends work to whom
      - [service:api-*, service:rerank-0]   # the APIs call the reranker
    misses:                                 # a cache passes what it misses on
      - [cache:redis-0, retrieval:qdrant-0]
    runs_on:                                # what runs where
      - [service:rerank-0, host:node-9]

A node is `PART:INSTANCE` (the parts of docs/path.md: gateway, service, engine, gpu, host,
cache, retrieval), or `hop`. An instance may be a shell pattern (`api-*`): it stands for every
instance of that part in the window, and for none where none matches. A literal node nothing
scraped is added to the path (an embedding service or a reranker without metrics is a
`service`): the walk passes through it like the hop. The edges add to those built from the
roles (`world.build_world`); none is taken away.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from infersight.diagnose.path.world import HOP
from infersight.signals import Part
from infersight.userfile import read_text
from infersight.yamltext import parse_yaml

EDGE_KINDS = ("calls", "misses", "runs_on")
#: the parts a declared node may be of: the path's, not the `instance` stand-in
PARTS = tuple(p for p in Part.__args__ if p != "instance")  # type: ignore[attr-defined]
_FORM = "write PART:INSTANCE, e.g. cache:redis-0"


class TopologyError(ValueError):
    """A path file that cannot be used; `str()` is the one line to print."""


@dataclass(frozen=True)
class Topology:
    """Declared edges, `(kind, from, to)`, instances possibly patterns."""

    edges: tuple[tuple[str, str, str], ...] = ()
    source: str = ""

    def __bool__(self) -> bool:
        return bool(self.edges)


def _node(value: Any, where: str) -> str:
    node = value.strip() if isinstance(value, str) else ""
    if node == HOP:
        return node
    part, sep, inst = node.partition(":")
    if not sep or not inst:
        raise TopologyError(f"{where}: {value!r} is no node: {_FORM}")
    if part not in PARTS:
        raise TopologyError(
            f"{where}: {part!r} is no part of the path; use one of {', '.join(PARTS)} or hop "
            "(a reranker or an embedding service is a service)"
        )
    return node


def parse_topology(doc: Any, source: str = "path file") -> Topology:
    """The edges of a parsed path file; a `TopologyError` naming the entry that is wrong."""
    if doc is None:
        return Topology(source=source)
    if not isinstance(doc, dict):
        raise TopologyError(
            f"{source}: expected keys {', '.join(EDGE_KINDS)}, each a list of pairs"
        )
    unknown = sorted(str(k) for k in doc if k not in EDGE_KINDS)
    if unknown:
        raise TopologyError(
            f"{source}: unknown key {unknown[0]!r}; the kinds of edge are {', '.join(EDGE_KINDS)}"
        )
    edges: list[tuple[str, str, str]] = []
    for kind in EDGE_KINDS:
        pairs = doc.get(kind) or []
        if not isinstance(pairs, list):
            raise TopologyError(f"{source}: {kind}: expected a list of [FROM, TO] pairs")
        for i, pair in enumerate(pairs):
            where = f"{source}: {kind}[{i}]"
            if not isinstance(pair, list | tuple) or len(pair) != 2:
                raise TopologyError(f"{where}: expected a pair [FROM, TO], got {pair!r}")
            a, b = _node(pair[0], where), _node(pair[1], where)
            if a == b:
                raise TopologyError(f"{where}: {a} cannot send work to itself")
            edges.append((kind, a, b))
    return Topology(tuple(edges), source)


def load_topology(path: Path) -> Topology:
    """Read and check a path file; a `TopologyError` in one line when it cannot be used."""
    text = read_text(path, "path file")
    try:
        doc = parse_yaml(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" (line {mark.line + 1})" if mark is not None else ""
        raise TopologyError(f"{path}: not valid YAML{at}: {getattr(exc, 'problem', exc)}") from None
    return parse_topology(doc, str(path))
