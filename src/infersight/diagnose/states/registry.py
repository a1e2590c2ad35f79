"""Every condition kind, found by its module: `state_on` is a lookup here.

A module of this package is a kind when it names the `STATES` it reads and has `read` and
`doc`; it may add `check(condition) -> str | None`, what a condition of its kind must carry
(a level, a `than`), returned as the reason a rule is refused. Adding a kind is one module
and its test: the knowledge base accepts its states, the engine reads them and docs/rules.md
lists them, from here.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

from infersight.diagnose import states as package
from infersight.diagnose.config import DiagnoseConfig
from infersight.diagnose.context import Context
from infersight.diagnose.kb import Condition
from infersight.diagnose.states.reading import Reader, Reading


@dataclass(frozen=True)
class Kind:
    module: str
    states: tuple[str, ...]
    read: Reader
    doc: Callable[[DiagnoseConfig], str]
    order: int
    check: Callable[[Condition], str | None] | None
    accepts: frozenset[str]


@cache
def kinds() -> tuple[Kind, ...]:
    """The kinds of this package, in the order docs/rules.md lists them."""
    out = []
    for info in pkgutil.iter_modules(package.__path__):
        mod = importlib.import_module(f"{package.__name__}.{info.name}")
        states = getattr(mod, "STATES", None)
        if states is None:
            continue  # a helper of the kinds (peaks, sizing, …), not a kind
        out.append(
            Kind(
                info.name,
                tuple(states),
                mod.read,
                mod.doc,
                getattr(mod, "ORDER", 1000),
                getattr(mod, "check", None),
                frozenset(getattr(mod, "ACCEPTS", ())),
            )
        )
    return tuple(sorted(out, key=lambda k: (k.order, k.module)))


@cache
def readers() -> dict[str, Reader]:
    """State → its reader; a state named by two modules is a programming error."""
    out: dict[str, Reader] = {}
    for kind in kinds():
        for state in kind.states:
            if state in out:
                raise RuntimeError(f"state {state!r} is read by two condition kinds")
            out[state] = kind.read
    return out


def check(c: Condition) -> str | None:
    """Why a condition cannot be read by its kind (unknown state, or its kind's own check)."""
    if c.state not in readers():
        return f"unknown state {c.state!r}; known: {', '.join(sorted(readers()))}"
    kind = _kind_of(c.state)
    return kind.check(c) if kind.check is not None else None


def _kind_of(state: str) -> Kind:
    return next(k for k in kinds() if state in k.states)


def accepts(state: str) -> frozenset[str]:
    """The options (factor, level, than, …) a condition of this state takes."""
    return _kind_of(state).accepts


def taking(option: str) -> list[str]:
    """The states whose kind takes this option, in the kinds' order."""
    return [s for k in kinds() if option in k.accepts for s in k.states]


def state_on(
    ctx: Context, c: Condition, inst: str, shown: bool = True, since: float | None = None
) -> Reading:
    """One condition on one instance (see `Reader`)."""
    return readers()[c.state](ctx, c, inst, shown, since)
