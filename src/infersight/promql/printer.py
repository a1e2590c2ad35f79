"""Print a parsed expression back as PromQL text that `parse` reads to the same tree.

Used in error messages and by the round-trip property test. Parentheses are added only where
precedence or associativity needs them.
"""

from __future__ import annotations

import math

from infersight.promql.ast import Aggregate, Binary, Call, Expr, Number, Selector, String, Unary

# binding strength of binary operators, as in the parser (higher binds tighter)
_PRECEDENCE: dict[str, int] = {
    "or": 0,
    "and": 1,
    "unless": 1,
    **dict.fromkeys(("==", "!=", ">", "<", ">=", "<="), 2),
    "+": 3,
    "-": 3,
    "*": 4,
    "/": 4,
    "%": 4,
    "^": 5,
}
_UNITS: tuple[tuple[str, float], ...] = (
    ("y", 31536000),
    ("w", 604800),
    ("d", 86400),
    ("h", 3600),
    ("m", 60),
    ("s", 1),
)


def format_duration(seconds: float) -> str:
    """300.0 → `5m`, 5400.0 → `1h30m`, 0.5 → `500ms`."""
    ms = round(seconds * 1000)
    if ms <= 0:
        raise ValueError(f"a duration must be positive, got {seconds}")
    out = []
    whole, rest_ms = divmod(ms, 1000)
    for unit, size in _UNITS:
        k, whole = divmod(whole, int(size))
        if k:
            out.append(f"{k}{unit}")
    if rest_ms:
        out.append(f"{rest_ms}ms")
    return "".join(out)


def _quote(value: str) -> str:
    escaped = (
        value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t")
    )
    return f'"{escaped}"'


def _number(value: float) -> str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Inf" if value > 0 else "-Inf"
    return repr(value)


def _selector(sel: Selector) -> str:
    text = sel.name
    if sel.matchers:
        text += "{" + ", ".join(f"{m.label}{m.op}{_quote(m.value)}" for m in sel.matchers) + "}"
    if sel.range_s is not None:
        text += f"[{format_duration(sel.range_s)}]"
    if sel.offset_s:
        text += f" offset {format_duration(sel.offset_s)}"
    return text


def _operand(expr: Expr, parent: str, right: bool) -> str:
    text = to_promql(expr)
    if isinstance(expr, Unary | Number) and text.startswith("-"):
        return f"({text})"
    if not isinstance(expr, Binary):
        return text
    mine, theirs = _PRECEDENCE[expr.op], _PRECEDENCE[parent]
    # `^` is right-associative, every other operator left-associative
    tie_needs_parens = right != (parent == "^")
    if mine < theirs or (mine == theirs and tie_needs_parens):
        return f"({text})"
    return text


def to_promql(expr: Expr) -> str:
    """PromQL text for the expression."""
    match expr:
        case Number(value=v):
            return _number(v)
        case String(value=v):
            return _quote(v)
        case Selector():
            return _selector(expr)
        case Call(func=f, args=args):
            return f"{f}(" + ", ".join(to_promql(a) for a in args) + ")"
        case Aggregate(op=op, expr=inner, grouping=grouping, without=without):
            mod = ""
            if grouping or without:
                mod = f" {'without' if without else 'by'} ({', '.join(grouping)}) "
            return f"{op}{mod}({to_promql(inner)})"
        case Unary(expr=inner):
            body = to_promql(inner)
            return f"-({body})" if isinstance(inner, Binary | Unary | Number) else f"-{body}"
        case Binary(op=op, lhs=lhs, rhs=rhs, return_bool=rb, on=on):
            mod = " bool" if rb else ""
            if on is not None:
                mod += f" on ({', '.join(on)})"
            return f"{_operand(lhs, op, False)} {op}{mod} {_operand(rhs, op, True)}"
    raise TypeError(f"not an expression: {expr!r}")
