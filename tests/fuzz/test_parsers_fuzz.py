"""Fuzz every parser of user input with hypothesis: each either succeeds or raises the project's
own one-line error type, never another exception (a traceback for the user).

A fixed, small budget (`BUDGET` examples per parser, no deadline) keeps the whole suite within a
few seconds on CI; the strategies mix free text with near-valid input built from each format's
own pieces, where the bugs live."""

from __future__ import annotations

import contextlib
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from infersight.bundle.manifest import parse_manifest
from infersight.diagnose.kb import KBError, parse_rule
from infersight.promql.parser import PromQLSyntaxError, parse
from infersight.sources.exposition import ExpositionError, parse_text
from infersight.sources.promjson import PromJSONError, parse_promjson
from infersight.timeparse import parse_duration, parse_time

BUDGET = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None
)


def _one_line(exc: BaseException) -> None:
    assert "\n" not in str(exc), repr(exc)


# -- exposition / OpenMetrics -------------------------------------------------------------------

_NAMES = st.sampled_from(["up", "vllm:num_requests_waiting", "h_bucket", "c_total", "x_created"])
_VALUES = st.sampled_from(["1", "-0.5", "NaN", "+Inf", "1e400", "0x1p3", "1_000", "", "nan"])
_TIMES = st.sampled_from(["", " 1764000000", " 1764000000000", " 1e300", " -5", " 17.5", " x"])
_LABELS = st.sampled_from(
    ["", '{a="b"}', '{le="0.1"}', '{a="\\"}', '{a="b",a="c"}', "{", '{a="\\n"}']
)
_META = st.sampled_from(
    ["# TYPE up gauge", "# TYPE up bogus", "# HELP up x", "# EOF", "# UNIT up s", "#", ""]
)
_LINE = st.one_of(
    st.tuples(_NAMES, _LABELS, st.just(" "), _VALUES, _TIMES).map("".join),
    _META,
    st.text(max_size=30),
)


@BUDGET
@given(st.lists(_LINE, max_size=12), st.sampled_from(["auto", "text", "openmetrics"]))
def test_exposition(lines: list[str], fmt: str) -> None:
    try:
        parse_text("\n".join(lines), "<fuzz>", fmt)  # type: ignore[arg-type]
    except ExpositionError as exc:
        _one_line(exc)


# -- query_range JSON ---------------------------------------------------------------------------

_JSON = st.recursive(
    st.none() | st.booleans() | st.floats() | st.integers() | st.text(max_size=10),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)
_POINT = st.lists(st.one_of(st.floats(), st.integers(), st.text(max_size=6), st.none()), max_size=3)
_LABELSET = st.dictionaries(st.sampled_from(["__name__", "a"]), st.text(max_size=5))
_SERIES = st.fixed_dictionaries(
    {"metric": st.one_of(_LABELSET, _JSON),
     "values": st.one_of(st.lists(_POINT, max_size=4), _JSON),
     "value": _POINT}
)  # fmt: skip
_DOC = st.fixed_dictionaries(
    {"status": st.sampled_from(["success", "error", 1]),
     "data": st.one_of(_JSON, st.fixed_dictionaries(
         {"resultType": st.sampled_from(["matrix", "vector", "scalar"]),
          "result": st.one_of(st.lists(_SERIES, max_size=3), _JSON)}))}
)  # fmt: skip


@BUDGET
@given(
    st.one_of(
        _DOC.map(lambda d: json.dumps(d, allow_nan=True)),
        st.text(max_size=60),
        st.binary(max_size=60),
    )
)
def test_query_range_json(data: str | bytes) -> None:
    try:
        parse_promjson(data, name=None)
    except PromJSONError as exc:
        _one_line(exc)


# -- bundle manifest ----------------------------------------------------------------------------

_NUM = st.one_of(st.floats(), st.integers())
_FILE = st.sampled_from(["metrics/incident.parquet", "../x"])
_WINDOW = st.fixed_dictionaries({"start": _NUM, "end": _NUM, "step": _NUM, "file": _FILE})
_SOURCE = st.dictionaries(st.sampled_from(["kind", "url"]), st.text(max_size=8))
_WINDOWS = st.dictionaries(st.sampled_from(["incident", "a b"]), _WINDOW, max_size=2)
_MEMBERS = st.dictionaries(
    st.sampled_from(["metrics/incident.parquet", "/abs"]), st.sampled_from(["0" * 64, "x"])
)
_MANIFEST = st.fixed_dictionaries(
    {"schema_version": st.sampled_from([1, 2, "1"]),
     "created_at": st.sampled_from(["2026-01-01T00:00:00Z", "2026-01-01T00:00:00+01:00", "x", 5]),
     "source": st.one_of(_SOURCE, _JSON),
     "windows": st.one_of(_WINDOWS, _JSON),
     "signals": st.lists(st.sampled_from(["service.queue_length", "nope"]), max_size=2),
     "instances": st.lists(st.text(max_size=4), max_size=2),
     "members": st.one_of(_MEMBERS, _JSON)}
)  # fmt: skip


@BUDGET
@given(st.one_of(_MANIFEST.map(json.dumps), st.text(max_size=60), st.binary(max_size=60)))
def test_manifest(data: str | bytes) -> None:
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    try:
        parse_manifest(raw)
    except ValueError as exc:  # parse_manifest's documented error; read_bundle wraps it
        _one_line(exc)


def test_a_source_key_with_a_newline_is_refused_on_one_line() -> None:
    """Found by the fuzzer: a manifest whose source has a key "\\n" made a two-line error."""
    data = (
        '{"schema_version": 1, "created_at": "2026-01-01T00:00:00Z", "source": {"\\n": null}, '
        '"windows": {}, "signals": [], "instances": [], "members": {}}'
    )
    with pytest.raises(ValueError) as err:
        parse_manifest(data.encode())
    _one_line(err.value)


# -- rule YAML (diagnose/kb.py) ------------------------------------------------------------------

_YAML_BITS = st.sampled_from(
    ["id: x", "layer: service", "title: t", "confirm:", "  - signal: service.queue_length",
     "    rose: 2", "refute: []", "requires: [a]", "!!python/object:os.system x", "- [", "{",
     "when: together", "stat: max", "  all:", "    - x", "\t", "&a [*a]", "key: *undefined"]
)  # fmt: skip


_RULES = st.one_of(st.lists(_YAML_BITS, max_size=10).map("\n".join), st.text(max_size=60))


@BUDGET
@given(_RULES)
def test_rule_yaml(text: str) -> None:
    with contextlib.suppress(KBError):
        parse_rule(text, "<fuzz>")


@BUDGET
@given(_RULES)
def test_rule_yaml_errors_are_one_line(text: str) -> None:
    try:
        parse_rule(text, "<fuzz>")
    except KBError as exc:
        _one_line(exc)


# -- mappings PromQL ----------------------------------------------------------------------------

_PROMQL_BITS = st.sampled_from(
    ["sum", " by (instance) ", "(", ")", "rate(", "x_total", "[5m]", "[$window]", "{a=\"b\"}",
     " / ", " * 1e6", "histogram_quantile(0.9, ", "offset 5m", "without", ",", "1", "-", "@",
     "{a=~\"(\"}", "[1y2", "max_over_time(", "clamp_max(", "\"", "or", " and on() ", "NaN"]
)  # fmt: skip


@BUDGET
@given(st.one_of(st.lists(_PROMQL_BITS, max_size=12).map("".join), st.text(max_size=40)))
def test_promql(text: str) -> None:
    try:
        parse(text)
    except PromQLSyntaxError as exc:
        _one_line(exc)


def test_promql_deep_nesting_is_one_line() -> None:
    try:
        parse("(" * 5000 + "1" + ")" * 5000)
    except PromQLSyntaxError as exc:
        _one_line(exc)


# -- time expressions ---------------------------------------------------------------------------

_TIME_BITS = st.sampled_from(
    ["now", "-", "1e300", "2h", "1764000000", "2026-12-02T02:17:00", "Z", "+01:00", "nan", "inf",
     "0001-01-01", "9999-12-31T23:59:59", "ms", "1.5", " ", "w", "1e12"]
)  # fmt: skip


@BUDGET
@given(st.one_of(st.lists(_TIME_BITS, max_size=5).map("".join), st.text(max_size=20)))
def test_time_expressions(text: str) -> None:
    for fn in (parse_time, parse_duration):
        try:
            fn(text)
        except ValueError as exc:
            _one_line(exc)
