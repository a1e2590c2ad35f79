"""Syntax tree of the PromQL subset that catalog mappings are written in.

The subset is what exporter mappings need: selectors with matchers and ranges, the range
functions (rate, increase, changes, …), histogram_quantile, label_replace, aggregations by
labels, arithmetic, comparisons and `or`. Anything else is refused when a catalog loads, not
when it runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

MatchOp = Literal["=", "!=", "=~", "!~"]


@dataclass(frozen=True)
class Matcher:
    label: str
    op: MatchOp
    value: str


@dataclass(frozen=True)
class Number:
    value: float


@dataclass(frozen=True)
class String:
    """A quoted string: only a function's argument (label_replace's labels and regex)."""

    value: str


@dataclass(frozen=True)
class Selector:
    name: str
    matchers: tuple[Matcher, ...] = ()
    range_s: float | None = None  # set for a range selector `x[5m]`
    offset_s: float = 0.0


@dataclass(frozen=True)
class Call:
    func: str
    args: tuple[Expr, ...]


@dataclass(frozen=True)
class Aggregate:
    op: str  # sum | avg | max | min | count
    expr: Expr
    grouping: tuple[str, ...] = ()
    without: bool = False


@dataclass(frozen=True)
class Binary:
    op: str  # + - * / % ^ == != > < >= <= or and unless
    lhs: Expr
    rhs: Expr
    return_bool: bool = False
    # set operators only: `and on (a, b)` matches on these labels (None: on all labels)
    on: tuple[str, ...] | None = None


@dataclass(frozen=True)
class Unary:
    op: Literal["-"]
    expr: Expr


Expr = Number | String | Selector | Call | Aggregate | Binary | Unary


def metric_names(node: Expr) -> frozenset[str]:
    """Every metric name a selector in the expression reads."""
    match node:
        case Selector(name=name):
            return frozenset({name})
        case Call(args=args):
            return frozenset().union(*(metric_names(a) for a in args))
        case Aggregate(expr=e) | Unary(expr=e):
            return metric_names(e)
        case Binary(lhs=lhs, rhs=rhs):
            return metric_names(lhs) | metric_names(rhs)
        case _:
            return frozenset()
