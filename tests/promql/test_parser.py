"""The PromQL subset parser: catalog expressions, error positions, print → parse round trip."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from infersight.exporters import IDENTITY_LABELS, load_catalog
from infersight.promql import PromQLSyntaxError, parse, parse_duration
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
from infersight.promql.parser import FUNCTIONS
from infersight.promql.printer import format_duration, to_promql

CATALOG_EXPRS = sorted(
    {
        m.render(window, IDENTITY_LABELS)
        for fam in load_catalog().families.values()
        for alts in fam.mappings.values()
        for m in alts
        for window in ("5m", "1m30s")
    }
)


@pytest.mark.parametrize("text", CATALOG_EXPRS)
def test_every_catalog_expression_parses_and_prints_back(text: str) -> None:
    tree = parse(text)
    assert parse(to_promql(tree)) == tree


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("rate(x[5m]) * on (a) y", "vector matching modifier 'on'"),
        ("x / ignoring (a) y", "vector matching modifier 'ignoring'"),
        ("a * group_left b", "vector matching modifier 'group_left'"),
        ("topk(3, x)", "function 'topk' is not supported"),
        ("rate(x)", "needs a range selector"),
        ("abs(x[5m])", "does not take a range selector"),
        ("histogram_quantile(q, x)", "needs a number"),
        ("x{a=b}", "expected a quoted label value"),
        ('x{a~"b"}', "unexpected character '~'"),
        ("sum by (a) (x) by (b)", "grouping given twice"),
        ("{a='b'}", "a selector needs a metric name"),
        ("x[5q]", "unexpected character '5'"),
        ("x[5]", "expected a duration"),
        ("(x", "expected ')'"),
        ("x y", "unexpected 'y'"),
        ("rate(x[5m]) offset 1m", "offset may only follow a metric selector"),
        ("clamp_max(x)", "takes 2 argument(s), got 1"),
        ('label_replace(x, "a", "$1", "b")', "takes 5 argument(s), got 4"),
        ('label_replace(x, a, "$1", "b", "(.*)")', "needs a quoted string here"),
        ('abs("x")', "unexpected string"),
        ('label_replace(x, "a", "$1", "b", "(")', "label_replace() regex '('"),
    ],
)
def test_unsupported_syntax_says_what_and_where(text: str, where: str) -> None:
    with pytest.raises(PromQLSyntaxError) as err:
        parse(text)
    msg = str(err.value)
    assert where in msg
    assert re.search(r" at \d+ in ", msg), msg
    pos = int(re.search(r" at (\d+) in ", msg).group(1))  # type: ignore[union-attr]
    assert 0 <= pos <= len(text)


def test_precedence_and_associativity() -> None:
    assert parse("a - b - c") == Binary(
        "-", Binary("-", Selector("a"), Selector("b")), Selector("c")
    )
    assert parse("a ^ b ^ c") == Binary(
        "^", Selector("a"), Binary("^", Selector("b"), Selector("c"))
    )
    assert parse("a + b * c > bool 1 and d or e") == parse("(((a + (b * c)) > bool 1) and d) or e")
    assert parse("x offset 5m") == Selector("x", offset_s=300.0)
    assert parse("-2") == Number(-2.0)
    assert parse("0x40") == Number(64.0)


def test_format_duration() -> None:
    assert format_duration(300) == "5m"
    assert format_duration(5400) == "1h30m"
    assert format_duration(0.5) == "500ms"
    assert format_duration(90061) == "1d1h1m1s"


# -- property: generated trees print and parse back to the same tree -----------------------------
NAMES = st.sampled_from(["up", "x_total", "vllm:num_requests_waiting", "DCGM_FI_DEV_GPU_UTIL"])
LABELS = st.sampled_from(["instance", "job", "le", "model_name", "Hostname", "code"])
VALUES = st.text(alphabet=st.sampled_from(list('ab5.*|:/"\\\n\t -')), max_size=8)
DURATIONS = st.one_of(
    st.integers(1, 3 * 86400).map(float),
    st.integers(1, 999).map(lambda ms: parse_duration(f"{ms}ms")),
)
NUMBERS = st.one_of(
    st.floats(allow_nan=False, allow_infinity=True, width=64),
    st.integers(-1000, 1000).map(float),
).map(Number)


def selectors(range_s: bool) -> st.SearchStrategy[Selector]:
    return st.builds(
        Selector,
        NAMES,
        st.lists(
            st.builds(Matcher, LABELS, st.sampled_from(["=", "!=", "=~", "!~"]), VALUES), max_size=3
        ).map(tuple),
        DURATIONS if range_s else st.none(),
        st.one_of(st.just(0.0), DURATIONS),
    )


def extend(inner: st.SearchStrategy[Expr]) -> st.SearchStrategy[Expr]:
    range_funcs = sorted(f for f, kinds in FUNCTIONS.items() if kinds == ("r",))
    vec_funcs = ["abs", "floor", "ceil"]
    ops = ["+", "-", "*", "/", "%", "^", "==", "!=", ">", "<", ">=", "<="]
    arith = st.builds(
        lambda op, a, b, rb: Binary(op, a, b, rb and op in ops[6:]),
        st.sampled_from(ops),
        inner,
        inner,
        st.booleans(),
    )
    setop = st.builds(
        Binary,
        st.sampled_from(["and", "or", "unless"]),
        inner,
        inner,
        st.just(False),
        st.one_of(st.none(), st.lists(LABELS, max_size=2).map(tuple)),
    )
    return st.one_of(
        arith,
        setop,
        st.builds(lambda e: Unary("-", e), inner.filter(lambda e: not isinstance(e, Number))),
        st.builds(lambda f, s: Call(f, (s,)), st.sampled_from(range_funcs), selectors(True)),
        st.builds(lambda f, e: Call(f, (e,)), st.sampled_from(vec_funcs), inner),
        st.builds(
            lambda f, e, n: Call(f, (e, n)),
            st.sampled_from(["clamp_min", "clamp_max"]),
            inner,
            NUMBERS,
        ),
        st.builds(lambda q, e: Call("histogram_quantile", (Number(q), e)), st.floats(0, 1), inner),
        st.builds(
            lambda e, a, b: Call(
                "label_replace", (e, String(a), String(b), String("instance"), String("(.*)"))
            ),
            inner,
            LABELS,
            VALUES,
        ),
        st.builds(
            Aggregate,
            st.sampled_from(["sum", "avg", "max", "min", "count"]),
            inner,
            st.lists(LABELS, max_size=3).map(tuple),
            st.booleans(),
        ),
    )


EXPRS = st.recursive(st.one_of(NUMBERS, selectors(False)), extend, max_leaves=12)


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(EXPRS)
def test_printed_expressions_parse_back(tree: Expr) -> None:
    text = to_promql(tree)
    assert parse(text) == tree, text


def test_power_binds_tighter_than_a_sign() -> None:
    from infersight.promql.ast import Binary, Number, Selector, Unary

    assert parse("-a ^ 2") == Unary("-", Binary("^", Selector("a"), Number(2.0)))
    assert parse("2 ^ -1") == Binary("^", Number(2.0), Number(-1.0))


def test_a_string_is_only_a_functions_argument() -> None:
    for text in ('"x"', 'x + "y"', 'sum("x")'):
        with pytest.raises(PromQLSyntaxError):
            parse(text)
    tree = parse('label_replace(x, "node", "$1", "server", "(.+)")')
    assert isinstance(tree, Call) and tree.args[1:] == (
        String("node"),
        String("$1"),
        String("server"),
        String("(.+)"),
    )
