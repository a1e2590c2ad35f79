"""Property tests: generated families rendered to text parse back equal, and agree with
prometheus_client's own parsers (text format and OpenMetrics) as an oracle."""

from __future__ import annotations

import math
from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from prometheus_client.openmetrics.parser import (
    text_string_to_metric_families as om_families,
)
from prometheus_client.parser import text_string_to_metric_families as text_families

from infersight.sources.exposition import parse_exposition
from infersight.sources.promfloat import label_float, sample_float

pytestmark = pytest.mark.slow

Key = tuple[str, tuple[tuple[str, str], ...]]
RESERVED = ("_total", "_bucket", "_sum", "_count", "_created", "_info", "_gcount", "_gsum")

names = st.from_regex(r"[a-zA-Z_:][a-zA-Z0-9_:]{0,20}", fullmatch=True).filter(
    lambda n: not n.endswith(RESERVED) and not n.startswith("__")
)
label_names = st.from_regex(r"[a-zA-Z][a-zA-Z0-9_]{0,10}", fullmatch=True).filter(
    lambda n: n not in ("le", "quantile")
)
label_values = st.text(
    alphabet=st.one_of(
        st.characters(blacklist_categories=("Cs", "Cc")), st.sampled_from('\\"\n{}#, =')
    ),
    min_size=1,
    max_size=12,
)
label_sets = st.dictionaries(label_names, label_values, max_size=3)
any_floats = st.floats(allow_nan=True, allow_infinity=True)
counts = st.integers(min_value=0, max_value=10**9).map(float)
non_negative = st.one_of(st.just(math.nan), st.floats(min_value=0.0, allow_infinity=True))


@dataclass
class Family:
    kind: str  # gauge | counter | histogram | summary
    name: str
    samples: list[tuple[str, dict[str, str], float]]  # (sample name, labels, value)


def _le_spelling(bound: float, variant: int) -> str:
    if math.isinf(bound):
        return "+Inf"
    if variant == 0 or bound != int(bound):
        return repr(bound)
    return str(int(bound)) if variant == 1 else f"{int(bound)}e0"


@st.composite
def families(draw: st.DrawFn, openmetrics: bool) -> Family:
    kind = draw(st.sampled_from(["gauge", "counter", "histogram", "summary"]))
    name = draw(names)
    sets = draw(
        st.lists(label_sets, min_size=1, max_size=3, unique_by=lambda d: tuple(sorted(d.items())))
    )
    samples: list[tuple[str, dict[str, str], float]] = []
    for labels in sets:
        if kind == "gauge":
            samples.append((name, labels, draw(any_floats)))
        elif kind == "counter":
            samples.append((name + "_total", labels, draw(counts if openmetrics else any_floats)))
        elif kind == "histogram":
            bounds = sorted(set(draw(st.lists(st.integers(0, 10_000), min_size=1, max_size=4))))
            cum = 0.0
            for b in [*(x / 4 for x in bounds), math.inf]:
                cum += draw(counts)
                le = _le_spelling(b, draw(st.integers(0, 2)))
                samples.append((name + "_bucket", {**labels, "le": le}, cum))
            samples.append((name + "_count", labels, cum))
            samples.append((name + "_sum", labels, draw(counts)))
        else:
            for q in draw(
                st.lists(st.sampled_from([0.5, 0.9, 0.99, 1.0]), min_size=1, unique=True)
            ):
                value = draw(non_negative if openmetrics else any_floats)
                samples.append((name, {**labels, "quantile": repr(q)}, value))
            samples.append((name + "_count", labels, draw(counts)))
            samples.append((name + "_sum", labels, draw(counts)))
    return Family(kind, name, samples)


def _escape(v: str) -> str:
    return v.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def render(fams: list[Family], openmetrics: bool) -> str:
    lines: list[str] = []
    for f in fams:
        family = f.name if (openmetrics or f.kind != "counter") else f.name + "_total"
        lines.append(f"# HELP {family} generated {f.kind} \\ with \\n escapes")
        lines.append(f"# TYPE {family} {f.kind}")
        for sample, labels, value in f.samples:
            body = ",".join(f'{k}="{_escape(v)}"' for k, v in labels.items())
            lines.append(
                f"{sample}{{{body}}} {sample_float(value)}"
                if body
                else f"{sample} {sample_float(value)}"
            )
    if openmetrics:
        lines.append("# EOF")
    return "\n".join(lines) + "\n"


def _canon(labels: dict[str, str]) -> tuple[tuple[str, str], ...]:
    out = {}
    for k, v in labels.items():
        if v == "":
            continue
        out[k] = label_float(float(v)) if k in ("le", "quantile") else v
    return tuple(sorted(out.items()))


def expected(fams: list[Family]) -> dict[Key, float]:
    return {(s, _canon(labels)): v for f in fams for s, labels, v in f.samples}


def ours(text: str) -> dict[Key, float]:
    store = parse_exposition(text, start=0.0, interval=15.0)
    out: dict[Key, float] = {}
    for s in store:
        assert s.ts.tolist() == [0.0]
        out[(s.name, s.labels)] = float(s.values[0])
    return out


def oracle(text: str, openmetrics: bool) -> dict[Key, float]:
    parse = om_families if openmetrics else text_families
    return {
        (s.name, _canon(s.labels)): float(s.value)
        for fam in parse(text)
        for s in fam.samples
        if not s.name.endswith("_created")
    }


def same(a: dict[Key, float], b: dict[Key, float]) -> bool:
    if a.keys() != b.keys():
        return False
    return all(a[k] == b[k] or (math.isnan(a[k]) and math.isnan(b[k])) for k in a)


def unique_names(fams: list[Family]) -> bool:
    return len({f.name for f in fams}) == len(fams)


@settings(max_examples=300, deadline=None)
@given(st.lists(families(openmetrics=False), min_size=1, max_size=4).filter(unique_names))
def test_text_format_round_trip_and_oracle(fams: list[Family]) -> None:
    text = render(fams, openmetrics=False)
    got = ours(text)
    assert same(got, expected(fams)), text
    assert same(got, oracle(text, openmetrics=False)), text


@settings(max_examples=300, deadline=None)
@given(st.lists(families(openmetrics=True), min_size=1, max_size=4).filter(unique_names))
def test_openmetrics_round_trip_and_oracle(fams: list[Family]) -> None:
    text = render(fams, openmetrics=True)
    got = ours(text)
    assert same(got, expected(fams)), text
    assert same(got, oracle(text, openmetrics=True)), text


@given(any_floats)
def test_sample_float_round_trips(x: float) -> None:
    text = f"g {sample_float(x)}\n"
    (series,) = parse_exposition(text, start=0.0, interval=1.0)
    v = float(series.values[0])
    assert v == x or (math.isnan(v) and math.isnan(x))


@given(st.floats(allow_nan=False))
def test_label_float_is_canonical_and_exact(x: float) -> None:
    s = label_float(x)
    assert float(s) == x or (x == 0 and float(s) == 0)
    assert label_float(float(s)) == s
