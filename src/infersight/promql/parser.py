"""A small recursive-descent parser for the PromQL subset of `ast.py`.

Precedence follows PromQL: `or` < `and`/`unless` < comparisons < `+ -` < `* / %` < `^` (right
associative) < unary minus.
"""

from __future__ import annotations

import re

from infersight.promql.ast import (
    Aggregate,
    Binary,
    Call,
    Expr,
    Matcher,
    MatchOp,
    Number,
    Selector,
    String,
    Unary,
)

AGGREGATIONS = frozenset({"sum", "avg", "max", "min", "count"})
FUNCTIONS: dict[str, tuple[str, ...]] = {
    # name: argument kinds, "v" instant vector, "r" range vector, "s" scalar
    "rate": ("r",),
    "irate": ("r",),
    "increase": ("r",),
    "delta": ("r",),
    "changes": ("r",),
    "resets": ("r",),
    "avg_over_time": ("r",),
    "max_over_time": ("r",),
    "min_over_time": ("r",),
    "sum_over_time": ("r",),
    "last_over_time": ("r",),
    "histogram_quantile": ("s", "v"),
    "clamp_min": ("v", "s"),
    "clamp_max": ("v", "s"),
    "abs": ("v",),
    "floor": ("v",),
    "ceil": ("v",),
    # (vector, destination label, replacement, source label, regex): identity from another
    # label, e.g. a gateway's per-server figures keyed by the server's name
    "label_replace": ("v", "q", "q", "q", "q"),
    # the evaluation time of each point, in seconds since the epoch: an age from a timestamp
    # a series holds (`time() - kube_pod_start_time`)
    "time": (),
}

_TOKEN = re.compile(
    r"""
    (?P<ws>\s+|\#[^\n]*)
  | (?P<duration>(?:\d+(?:ms|[smhdwy]))+)(?![A-Za-z0-9_:])
  | (?P<number>(?:0[xX][0-9a-fA-F]+|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|[Ii]nf|NaN))
    (?![A-Za-z0-9_:])
  | (?P<ident>[A-Za-z_:][A-Za-z0-9_:]*)
  | (?P<string>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')
  | (?P<op>=~|!~|==|!=|>=|<=|[-+*/%^(){}\[\],=<>])
    """,
    re.X,
)
_DURATION_PART = re.compile(r"(\d+)(ms|[smhdwy])")
_UNIT_S = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800, "y": 31536000}
_COMPARISONS = ("==", "!=", ">", "<", ">=", "<=")
_KEYWORDS = {"by", "without", "offset", "bool", "or", "and", "unless", "on", "ignoring"}


class PromQLSyntaxError(ValueError):
    """The expression is not in the supported subset; the message says where and why."""


def parse_duration(text: str) -> float:
    """`5m` → 300.0, `1h30m` → 5400.0."""
    parts = _DURATION_PART.findall(text)
    if not parts or "".join(n + u for n, u in parts) != text:
        raise PromQLSyntaxError(f"bad duration {text!r}")
    return float(sum(int(n) * _UNIT_S[u] for n, u in parts))


def _unquote(s: str) -> str:
    body = s[1:-1]
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t"}.get(m[1], m[1]), body)


#: Deepest nesting of sub-expressions (parentheses, signs, calls) accepted. The catalog's mappings
#: nest under 10; each level costs the recursive parser (and evaluator) about ten Python frames,
#: so 50 stays far from the interpreter's recursion limit.
MAX_NESTING = 50


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.depth = 0
        self.toks: list[tuple[str, str, int]] = []
        pos = 0
        while pos < len(text):
            m = _TOKEN.match(text, pos)
            if not m:
                raise PromQLSyntaxError(f"unexpected character {text[pos]!r} at {pos} in {text!r}")
            kind = m.lastgroup or ""
            if kind != "ws":
                self.toks.append((kind, m.group(), pos))
            pos = m.end()
        self.i = 0

    # -- token helpers --------------------------------------------------------------------------
    def peek(self, offset: int = 0) -> tuple[str, str]:
        j = self.i + offset
        return self.toks[j][:2] if j < len(self.toks) else ("eof", "")

    def fail(self, why: str) -> PromQLSyntaxError:
        at = self.toks[self.i][2] if self.i < len(self.toks) else len(self.text)
        return PromQLSyntaxError(f"{why} at {at} in {self.text!r}")

    def take(self, value: str) -> None:
        if self.peek()[1] != value:
            raise self.fail(f"expected {value!r}, found {self.peek()[1] or 'end'!r}")
        self.i += 1

    def accept(self, value: str) -> bool:
        if self.peek()[1] == value:
            self.i += 1
            return True
        return False

    # -- grammar --------------------------------------------------------------------------------
    def parse(self) -> Expr:
        expr = self.binary(0)
        if self.peek()[0] != "eof":
            raise self.fail(f"unexpected {self.peek()[1]!r}")
        return expr

    _LEVELS: tuple[tuple[str, ...], ...] = (
        ("or",),
        ("and", "unless"),
        _COMPARISONS,
        ("+", "-"),
        ("*", "/", "%"),
        ("^",),
    )

    def binary(self, level: int) -> Expr:
        if level == len(self._LEVELS):
            return self.unary()
        lhs = self.binary(level + 1)
        ops = self._LEVELS[level]
        while self.peek()[1] in ops:
            op = self.peek()[1]
            self.i += 1
            return_bool = op in _COMPARISONS and self.accept("bool")
            on: tuple[str, ...] | None = None
            if op in ("and", "or", "unless") and self.peek()[1] == "on":
                on = self.label_list()
            elif self.peek()[1] in ("on", "ignoring", "group_left", "group_right"):
                raise self.fail(
                    f"vector matching modifier {self.peek()[1]!r} is supported only as "
                    "`and|or|unless on (labels)`"
                )
            # `^` is right-associative
            rhs = self.binary(level) if op == "^" else self.binary(level + 1)
            lhs = Binary(op, lhs, rhs, return_bool, on)
            if op == "^":
                break
        return lhs

    def unary(self) -> Expr:
        self.depth += 1
        if self.depth > MAX_NESTING:
            raise self.fail(f"nested more than {MAX_NESTING} deep")
        try:
            return self._unary()
        finally:
            self.depth -= 1

    def _unary(self) -> Expr:
        # As in PromQL, `^` binds tighter than a sign: `-a ^ 2` is `-(a ^ 2)`.
        power = len(self._LEVELS) - 1
        if self.accept("-"):
            inner = self.binary(power)
            return Number(-inner.value) if isinstance(inner, Number) else Unary("-", inner)
        if self.accept("+"):
            return self.binary(power)
        return self.postfix(self.primary())

    def postfix(self, expr: Expr) -> Expr:
        if self.peek()[1] == "[":
            if not isinstance(expr, Selector) or expr.range_s is not None:
                raise self.fail("a range [..] may only follow a metric selector")
            self.i += 1
            kind, text = self.peek()
            if kind != "duration":
                raise self.fail("expected a duration such as 5m")
            self.i += 1
            self.take("]")
            expr = Selector(expr.name, expr.matchers, parse_duration(text), expr.offset_s)
        if self.accept("offset"):
            if not isinstance(expr, Selector):
                raise self.fail("offset may only follow a metric selector")
            kind, text = self.peek()
            if kind != "duration":
                raise self.fail("expected a duration after offset")
            self.i += 1
            expr = Selector(expr.name, expr.matchers, expr.range_s, parse_duration(text))
        return expr

    def primary(self) -> Expr:
        kind, text = self.peek()
        if kind == "string":  # a function's argument; `call` refuses it anywhere else
            self.i += 1
            return String(_unquote(text))
        if kind == "number":
            self.i += 1
            return Number(float(int(text, 16)) if text.lower().startswith("0x") else float(text))
        if self.accept("("):
            inner = self.binary(0)
            self.take(")")
            return inner
        if kind == "op" and text == "{":
            raise self.fail("a selector needs a metric name")
        if kind != "ident" or text in _KEYWORDS:
            raise self.fail(f"unexpected {text or 'end'!r}")
        self.i += 1
        if text in AGGREGATIONS and self.peek()[1] in ("(", "by", "without"):
            return self.aggregation(text)
        if text in FUNCTIONS and self.peek()[1] == "(":
            return self.call(text)
        if self.peek()[1] == "(":
            raise self.fail(f"function {text!r} is not supported")
        return Selector(text, self.matchers())

    def grouping(self) -> tuple[bool, tuple[str, ...]]:
        without = self.peek()[1] == "without"
        return without, self.label_list()

    def label_list(self) -> tuple[str, ...]:
        """`by|without|on (a, b)`: skips the keyword, returns the labels."""
        self.i += 1
        self.take("(")
        labels: list[str] = []
        while not self.accept(")"):
            kind, text = self.peek()
            if kind != "ident":
                raise self.fail("expected a label name")
            labels.append(text)
            self.i += 1
            if not self.accept(","):
                self.take(")")
                break
        return tuple(labels)

    def aggregation(self, op: str) -> Expr:
        without, labels = False, tuple[str, ...]()
        if self.peek()[1] in ("by", "without"):
            without, labels = self.grouping()
        self.take("(")
        inner = self.binary(0)
        self.take(")")
        if self.peek()[1] in ("by", "without"):
            if labels:
                raise self.fail("grouping given twice")
            without, labels = self.grouping()
        return Aggregate(op, inner, labels, without)

    def call(self, func: str) -> Expr:
        self.take("(")
        args: list[Expr] = []
        while self.peek()[1] != ")":
            args.append(self.binary(0))
            if not self.accept(","):
                break
        self.take(")")
        kinds = FUNCTIONS[func]
        if len(args) != len(kinds):
            raise self.fail(f"{func}() takes {len(kinds)} argument(s), got {len(args)}")
        for kind, arg in zip(kinds, args, strict=True):
            is_range = isinstance(arg, Selector) and arg.range_s is not None
            if kind == "r" and not is_range:
                raise self.fail(f"{func}() needs a range selector such as x[5m]")
            if kind != "r" and is_range:
                raise self.fail(f"{func}() does not take a range selector")
            if kind == "s" and not isinstance(arg, Number):
                raise self.fail(f"{func}() needs a number here")
            if (kind == "q") != isinstance(arg, String):
                raise self.fail(
                    f"{func}() needs a quoted string here" if kind == "q" else "unexpected string"
                )
        if func == "label_replace":  # refused when a mapping loads, not when it runs
            pattern = args[4]
            assert isinstance(pattern, String)
            try:
                re.compile(pattern.value)
            except re.error as exc:
                raise self.fail(f"label_replace() regex {pattern.value!r}: {exc}") from None
        return Call(func, tuple(args))

    def matchers(self) -> tuple[Matcher, ...]:
        if not self.accept("{"):
            return ()
        out: list[Matcher] = []
        while not self.accept("}"):
            kind, label = self.peek()
            if kind != "ident":
                raise self.fail("expected a label name")
            self.i += 1
            op = self.peek()[1]
            if op not in ("=", "!=", "=~", "!~"):
                raise self.fail("expected =, !=, =~ or !~")
            self.i += 1
            kind, value = self.peek()
            if kind != "string":
                raise self.fail("expected a quoted label value")
            self.i += 1
            match_op: MatchOp = op  # type: ignore[assignment]
            out.append(Matcher(label, match_op, _unquote(value)))
            if not self.accept(","):
                self.take("}")
                break
        return tuple(out)


def parse(text: str) -> Expr:
    """Parse an expression of the supported subset, or raise PromQLSyntaxError."""
    expr = _Parser(text).parse()
    if _loose_string(expr):
        raise PromQLSyntaxError(f"a quoted string is only a function's argument: {text!r}")
    return expr


def _loose_string(node: Expr) -> bool:
    """Whether a string stands where a value is read (`call` checked its own arguments)."""
    match node:
        case String():
            return True
        case Call(args=args):
            return any(_loose_string(a) for a in args if not isinstance(a, String))
        case Aggregate(expr=e) | Unary(expr=e):
            return _loose_string(e)
        case Binary(lhs=lhs, rhs=rhs):
            return _loose_string(lhs) or _loose_string(rhs)
        case _:
            return False
