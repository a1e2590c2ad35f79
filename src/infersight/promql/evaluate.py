"""Evaluate the PromQL subset locally over raw samples, at every point of a regular grid.

The semantics follow Prometheus (a range query's value at each step) as far as the subset
goes; the known differences are listed in `evaluate`'s docstring. Intermediate results are
vectors: a list of (labels, values[n]) where NaN means "no sample at that point", so every
operation works on whole rows at once.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cache

import numpy as np

from infersight.frame import DEFAULT_LOOKBACK_S, align_samples
from infersight.promql.ast import (
    Aggregate,
    Binary,
    Call,
    Expr,
    Matcher,
    Number,
    Selector,
    String,
    Unary,
)
from infersight.promql.functions import (
    ELEMENTWISE,
    KEEPS_NAME,
    RANGE_FUNCTIONS,
    BoolArray,
    FloatArray,
    Windows,
    aggregate_rows,
    histogram_quantile,
)
from infersight.sources.raw import RawStore

Labels = dict[str, str]
Vector = list[tuple[Labels, FloatArray]]
NAME = "__name__"


class EvaluationError(ValueError):
    """The expression cannot be evaluated over this data (e.g. ambiguous vector matching)."""


@dataclass(frozen=True)
class _Scalar:
    values: FloatArray


_Value = Vector | _Scalar


@dataclass(frozen=True)
class _Ctx:
    store: RawStore
    start: float
    step: float
    n: int

    @property
    def times(self) -> FloatArray:
        return self.start + self.step * np.arange(self.n, dtype=np.float64)


def evaluate(expr: Expr, store: RawStore, start: float, step: float, n: int) -> Vector:
    """Values of `expr` at start, start+step, … (n points), as a range query would return.

    Each result series is (labels, values) with NaN where it has no value. A scalar result is
    one series with empty labels. Differences from Prometheus: NaN is "absent", so a NaN that
    Prometheus would carry (0/0 inside an aggregation) is dropped instead; range windows are
    left-open (t-range, t] as in Prometheus 3 (2.x includes a sample exactly at t-range).
    """
    with np.errstate(all="ignore"):  # ±Inf samples make NaN by IEEE rules, as in Prometheus
        out = _eval(expr, _Ctx(store, start, step, n))
    if isinstance(out, _Scalar):
        return [({}, out.values)]
    return _nonempty(out)


def _eval(expr: Expr, ctx: _Ctx) -> _Value:
    match expr:
        case Number(value=v):
            return _Scalar(np.full(ctx.n, v))
        case Selector(range_s=None):
            return _instant(expr, ctx)
        case Selector():
            raise EvaluationError("a range selector must be the argument of a range function")
        case Call():
            return _call(expr, ctx)
        case Aggregate():
            return _aggregate(expr, ctx)
        case Unary(expr=inner):
            val = _eval(inner, ctx)
            if isinstance(val, _Scalar):
                return _Scalar(-val.values)
            return [(_drop_name(lb), -v) for lb, v in val]
        case Binary():
            return _binary(expr, _eval(expr.lhs, ctx), _eval(expr.rhs, ctx))
    raise EvaluationError(f"cannot evaluate {expr!r}")


# -- selectors ----------------------------------------------------------------------------------
@cache
def _regex(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.DOTALL)


def _matches(m: Matcher, labels: Labels) -> bool:
    value = labels.get(m.label, "")
    if m.op == "=":
        return value == m.value
    if m.op == "!=":
        return value != m.value
    hit = _regex(m.value).fullmatch(value) is not None
    return hit if m.op == "=~" else not hit


def _select(
    sel: Selector, store: RawStore, after: float, until: float
) -> Iterable[tuple[Labels, FloatArray, FloatArray]]:
    """The series a selector matches with a sample in (after, until]: one that ended before the
    evaluated span, or began after it, gives nothing there and is not read (a store of a whole
    run holds every pod a day of rollouts made)."""
    for s in store.series(sel.name):
        if not s.ts.size or s.ts[-1] <= after or s.ts[0] > until:
            continue
        labels = {NAME: s.name, **s.label_map}
        if all(_matches(m, labels) for m in sel.matchers):
            yield labels, s.ts, s.values


def _instant(sel: Selector, ctx: _Ctx) -> Vector:
    start = ctx.start - sel.offset_s
    end = start + ctx.step * (ctx.n - 1)
    return [
        (lb, align_samples(ts, v, start, ctx.step, ctx.n, DEFAULT_LOOKBACK_S))
        for lb, ts, v in _select(sel, ctx.store, start - DEFAULT_LOOKBACK_S, end)
    ]


# -- functions ----------------------------------------------------------------------------------
def _drop_name(labels: Labels) -> Labels:
    return {k: v for k, v in labels.items() if k != NAME}


def _vector(val: _Value, func: str) -> Vector:
    if isinstance(val, _Scalar):
        raise EvaluationError(f"{func}() needs an instant vector, got a scalar")
    return val


def _scalar_arg(expr: Expr, func: str) -> float:
    if not isinstance(expr, Number):
        raise EvaluationError(f"{func}() needs a number literal")
    return expr.value


def _call(call: Call, ctx: _Ctx) -> _Value:
    f = call.func
    if f in RANGE_FUNCTIONS:
        sel = call.args[0]
        if not isinstance(sel, Selector) or sel.range_s is None:
            raise EvaluationError(f"{f}() needs a range selector")
        ends = ctx.times - sel.offset_s
        fn = RANGE_FUNCTIONS[f]
        out: Vector = []
        for lb, ts, v in _select(sel, ctx.store, float(ends[0]) - sel.range_s, float(ends[-1])):
            w = Windows.over(ts, ends, sel.range_s)
            out.append((lb if f in KEEPS_NAME else _drop_name(lb), fn(ts, v, w)))
        return out
    if f == "histogram_quantile":
        q = _scalar_arg(call.args[0], f)
        groups: dict[tuple[tuple[str, str], ...], list[tuple[str, FloatArray]]] = {}
        for lb, v in _vector(_eval(call.args[1], ctx), f):
            if "le" not in lb:
                continue
            key = tuple(sorted((k, x) for k, x in lb.items() if k not in (NAME, "le")))
            groups.setdefault(key, []).append((lb["le"], v))
        return [
            (
                dict(key),
                histogram_quantile(q, [le for le, _ in rows], np.vstack([r for _, r in rows])),
            )
            for key, rows in groups.items()
        ]
    if f == "time":
        return _Scalar(ctx.times.astype(np.float64))
    if f == "label_replace":
        return _label_replace(_vector(_eval(call.args[0], ctx), f), call.args[1:])
    if f in ELEMENTWISE:
        arg = _scalar_arg(call.args[1], f) if len(call.args) > 1 else 0.0
        fn1 = ELEMENTWISE[f]
        return [(_drop_name(lb), fn1(v, arg)) for lb, v in _vector(_eval(call.args[0], ctx), f)]
    raise EvaluationError(f"function {f}() is not supported")


_GO_GROUP = re.compile(r"\$(?:\{(\w+)\}|(\w+)|(\$))")


def _label_replace(vec: Vector, args: tuple[Expr, ...]) -> Vector:
    """Prometheus's label_replace: where the source label's value matches the regex (anchored),
    the destination label becomes the replacement with `$1`, `${1}`, `$name` expanded (Go's
    regexp.Expand: a group that did not take part, or an unknown name, is empty); an empty
    result removes the label. Other series pass unchanged, the metric name kept."""
    dst, repl, src, pattern = (a.value for a in args if isinstance(a, String))
    try:
        rx = re.compile(pattern)
    except re.error as exc:
        raise EvaluationError(f"label_replace(): invalid regex {pattern!r}: {exc}") from exc

    def expand(m: re.Match[str]) -> str:
        def one(g: re.Match[str]) -> str:
            if g[3]:
                return "$"
            ref = g[1] or g[2]
            try:
                got = m.group(int(ref) if ref.isdigit() else ref)
            except IndexError:  # no such group
                return ""
            return got or ""

        return _GO_GROUP.sub(one, repl)

    out: Vector = []
    for lb, v in vec:
        m = rx.fullmatch(lb.get(src, ""))
        if m is None:
            out.append((lb, v))
            continue
        new = dict(lb)
        value = expand(m)
        if value:
            new[dst] = value
        else:
            new.pop(dst, None)
        out.append((new, v))
    return out


# -- aggregation --------------------------------------------------------------------------------
def _group_key(
    labels: Labels, grouping: tuple[str, ...], without: bool
) -> tuple[tuple[str, str], ...]:
    if without:
        drop = {*grouping, NAME}
        return tuple(sorted((k, v) for k, v in labels.items() if k not in drop))
    return tuple(sorted((k, labels[k]) for k in set(grouping) if k in labels))


def _aggregate(agg: Aggregate, ctx: _Ctx) -> Vector:
    groups: dict[tuple[tuple[str, str], ...], list[FloatArray]] = {}
    for lb, v in _vector(_eval(agg.expr, ctx), agg.op):
        groups.setdefault(_group_key(lb, agg.grouping, agg.without), []).append(v)
    out: Vector = []
    for key, rows in groups.items():
        out.append((dict(key), aggregate_rows(agg.op, np.vstack(rows))))
    return out


# -- binary operators ---------------------------------------------------------------------------
_ARITH: dict[str, Callable[[FloatArray, FloatArray], FloatArray]] = {
    "+": np.add,
    "-": np.subtract,
    "*": np.multiply,
    "/": np.divide,
    "%": np.fmod,
    "^": np.power,
}
_CMP: dict[str, Callable[[FloatArray, FloatArray], BoolArray]] = {
    "==": np.equal,
    "!=": np.not_equal,
    ">": np.greater,
    "<": np.less,
    ">=": np.greater_equal,
    "<=": np.less_equal,
}


def _apply(
    op: str, a: FloatArray, b: FloatArray, return_bool: bool, keep: FloatArray
) -> FloatArray:
    """`a op b` where both are present; a comparison keeps `keep` (the vector side's value)."""
    both = ~np.isnan(a) & ~np.isnan(b)
    with np.errstate(all="ignore"):
        if op in _ARITH:
            return np.where(both, _ARITH[op](a, b), np.nan)
        hit = _CMP[op](a, b)
    if return_bool:
        return np.where(both, hit.astype(np.float64), np.nan)
    return np.where(both & hit, keep, np.nan)


def _binary(node: Binary, lhs: _Value, rhs: _Value) -> _Value:
    op = node.op
    if op in ("and", "or", "unless"):
        if isinstance(lhs, _Scalar) or isinstance(rhs, _Scalar):
            raise EvaluationError(f"`{op}` needs vectors on both sides")
        return _set_operation(op, lhs, rhs, node.on)
    drop = op in _ARITH or node.return_bool
    if isinstance(lhs, _Scalar):
        if isinstance(rhs, _Scalar):
            return _Scalar(_apply(op, lhs.values, rhs.values, True, lhs.values))
        return [
            (_drop_name(lb) if drop else lb, _apply(op, lhs.values, v, node.return_bool, v))
            for lb, v in rhs
        ]
    if isinstance(rhs, _Scalar):
        return [
            (_drop_name(lb) if drop else lb, _apply(op, v, rhs.values, node.return_bool, v))
            for lb, v in lhs
        ]
    return _one_to_one(node, lhs, rhs, drop)


def _by_signature(
    vec: Vector, side: str
) -> dict[tuple[tuple[str, str], ...], tuple[Labels, FloatArray]]:
    out: dict[tuple[tuple[str, str], ...], tuple[Labels, FloatArray]] = {}
    for lb, v in vec:
        sig = tuple(sorted(_drop_name(lb).items()))
        if sig in out:
            old_lb, old = out[sig]
            if np.any(~np.isnan(old) & ~np.isnan(v)):
                raise EvaluationError(
                    f"many-to-many matching not allowed: two {side}-hand series share labels "
                    f"{dict(sig)}"
                )
            v = np.where(np.isnan(old), v, old)
            lb = old_lb
        out[sig] = (lb, v)
    return out


def _one_to_one(node: Binary, lhs: Vector, rhs: Vector, drop: bool) -> Vector:
    right = _by_signature(rhs, "right")
    out: Vector = []
    for sig, (lb, a) in _by_signature(lhs, "left").items():
        if sig in right:
            b = right[sig][1]
            out.append((_drop_name(lb) if drop else lb, _apply(node.op, a, b, node.return_bool, a)))
    return out


Signature = tuple[tuple[str, str], ...]


def _set_signature(labels: Labels, on: tuple[str, ...] | None) -> Signature:
    if on is None:
        return tuple(sorted(_drop_name(labels).items()))
    return tuple((k, labels.get(k, "")) for k in on)


def _presence(vec: Vector, on: tuple[str, ...] | None) -> dict[Signature, BoolArray]:
    out: dict[Signature, BoolArray] = {}
    for lb, v in vec:
        sig = _set_signature(lb, on)
        here = ~np.isnan(v)
        out[sig] = out[sig] | here if sig in out else here
    return out


def _set_operation(op: str, lhs: Vector, rhs: Vector, on: tuple[str, ...] | None) -> Vector:
    """`and`, `or`, `unless`, point by point: which side has a series of the signature there."""
    if op == "or":
        left = _presence(lhs, on)
        merged: dict[Signature, tuple[Labels, FloatArray]] = {}
        extra = [
            (lb, np.where(left.get(_set_signature(lb, on), False), np.nan, v)) for lb, v in rhs
        ]
        for lb, v in [*lhs, *extra]:
            key = tuple(sorted(lb.items()))
            if key in merged:
                v = np.where(np.isnan(merged[key][1]), v, merged[key][1])
            merged[key] = (lb, v)
        return list(merged.values())
    right = _presence(rhs, on)
    out: Vector = []
    for lb, v in lhs:
        there = right.get(_set_signature(lb, on))
        if there is None:
            there = np.zeros(v.shape, dtype=bool)
        keep = there if op == "and" else ~there
        out.append((lb, np.where(keep, v, np.nan)))
    return out


def _nonempty(vec: Vector) -> Vector:
    return [(lb, v) for lb, v in vec if not np.all(np.isnan(v))]
