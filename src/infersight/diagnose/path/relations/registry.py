"""Every relation, found by its module (see the package doc)."""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

from infersight.diagnose.path import relations as package
from infersight.diagnose.path.change import Change
from infersight.diagnose.path.reader import Reader


@dataclass(frozen=True)
class Relation:
    name: str
    explain: Callable[[Reader, Change], list[Change]]
    doc: Callable[[], str]
    order: int


@cache
def relations() -> tuple[Relation, ...]:
    out = []
    for info in pkgutil.iter_modules(package.__path__):
        mod = importlib.import_module(f"{package.__name__}.{info.name}")
        name = getattr(mod, "NAME", None)
        if name is None:
            continue
        out.append(Relation(name, mod.explain, mod.doc, getattr(mod, "ORDER", 1000)))
    return tuple(sorted(out, key=lambda r: (r.order, r.name)))
