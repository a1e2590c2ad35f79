"""The local evaluator on hand-computed cases (the comparison with a real Prometheus is in
test_evaluate_server.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from infersight.promql import parse
from infersight.promql.evaluate import EvaluationError, evaluate
from infersight.promql.functions import histogram_quantile
from infersight.sources.raw import RawStore, labels_of

INF = math.inf


def store_of(*series: tuple[str, dict[str, str], list[float], list[float]]) -> RawStore:
    s = RawStore()
    for name, labels, ts, values in series:
        s.add_many(name, labels_of(labels), ts, values)
    return s


def ev(expr: str, store: RawStore, start: float = 300.0, step: float = 60.0, n: int = 1):
    return {tuple(sorted(lb.items())): v for lb, v in evaluate(parse(expr), store, start, step, n)}


TS = [float(t) for t in range(5, 300, 10)]  # 30 samples, 10 s apart, 5 s off the window edges


def test_rate_extrapolates_to_the_window_edges() -> None:
    s = store_of(("c_total", {"i": "a"}, TS, [100.0 + 2 * k for k in range(len(TS))]))
    (rate,) = ev("rate(c_total[5m])", s).values()
    # 58 counted over 290 s of samples, extrapolated by 5 s at each end: 0.2/s over 300 s
    assert rate[0] == pytest.approx(58 * 300 / 290 / 300)
    (inc,) = ev("increase(c_total[5m])", s).values()
    assert inc[0] == pytest.approx(58 * 300 / 290)


def test_counter_reset_adds_the_value_before_the_drop() -> None:
    vals = [10.0 * k for k in range(15)] + [3.0 + 10.0 * k for k in range(15)]
    s = store_of(("c_total", {}, TS, vals))
    (inc,) = ev("increase(c_total[5m])", s).values()
    raw = vals[-1] - vals[0] + vals[14]  # 143 + 140
    # the first sample is 0: the zero point is the first sample, no extrapolation before it
    assert inc[0] == pytest.approx(raw * (290 + 0 + 5) / 290)
    (resets,) = ev("resets(c_total[5m])", s).values()
    assert resets[0] == 1


def test_counter_is_not_extrapolated_below_zero() -> None:
    ts = [250.0, 260.0, 270.0, 280.0, 290.0]
    s = store_of(("c_total", {}, ts, [1.0, 3.0, 5.0, 7.0, 9.0]))
    (inc,) = ev("increase(c_total[5m])", s).values()
    # the zero point lies 5 s before the first sample; the window edge 250 s before
    assert inc[0] == pytest.approx(8 * (40 + 5 + 10) / 40)


def test_a_lone_sample_has_no_rate_but_has_changes() -> None:
    s = store_of(("c_total", {}, [295.0], [7.0]))
    assert ev("rate(c_total[5m])", s) == {}
    assert next(iter(ev("changes(c_total[5m])", s).values()))[0] == 0


def test_irate_of_a_series_with_one_sample_is_absent() -> None:
    # a target scraped once (a pod that just started) used to raise IndexError
    s = store_of(("c_total", {}, [295.0], [7.0]))
    assert ev("irate(c_total[5m])", s, n=3) == {}
    s = store_of(("c_total", {}, [200.0, 290.0], [1.0, 10.0]))
    (irate,) = ev("irate(c_total[5m])", s, start=250.0, n=2).values()
    assert math.isnan(irate[0]) and irate[1] == pytest.approx(0.1)


def test_instant_selector_lookback_and_offset() -> None:
    s = store_of(("g", {"i": "a"}, [0.0, 100.0], [1.0, 2.0]))
    (row,) = ev("g", s, start=50.0, step=200.0, n=3).values()
    np.testing.assert_array_equal(row, [1.0, 2.0, np.nan])  # 450 - 100 > 300: stale
    (row,) = ev("g offset 100s", s, start=150.0, step=1.0, n=1).values()
    assert row[0] == 1.0


def test_regex_matchers_are_anchored() -> None:
    s = store_of(
        *[("g", {"instance": i}, [290.0], [1.0]) for i in ("node-1", "node-10", "xnode-1")]
    )
    got = {dict(k)["instance"] for k in ev('g{instance=~"node-1"}', s)}
    assert got == {"node-1"}
    got = {dict(k)["instance"] for k in ev('g{instance!~"node-1.*"}', s)}
    assert got == {"xnode-1"}
    assert len(ev('g{missing=""}', s)) == 3  # an absent label matches the empty string


def test_vector_matching_and_division_by_zero() -> None:
    s = store_of(
        ("a", {"i": "1"}, [290.0], [4.0]),
        ("a", {"i": "2"}, [290.0], [0.0]),
        ("b", {"i": "1"}, [290.0], [0.0]),
        ("b", {"i": "2"}, [290.0], [0.0]),
        ("b", {"i": "3"}, [290.0], [1.0]),
    )
    got = ev("a / b", s)
    assert got[(("i", "1"),)][0] == INF
    assert (("i", "2"),) not in got  # 0/0 is NaN: no value
    assert (("i", "3"),) not in got  # no partner on the left
    got = ev("a > bool 1", s)
    assert [v[0] for v in got.values()] == [1.0, 0.0]
    assert all(("__name__", "a") not in k for k in got)
    assert all(("__name__", "a") in k for k in ev("a > 1", s))


def test_series_differing_only_by_name_match_point_by_point() -> None:
    s = store_of(
        ("a", {"i": "1"}, [0.0], [1.0]),
        ("b", {"i": "1"}, [1000.0], [2.0]),
        ("c", {"i": "1"}, [0.0, 1000.0], [10.0, 20.0]),
    )
    ((key, row),) = ev("(a or b) + c", s, start=100.0, step=1000.0, n=2).items()
    assert key == (("i", "1"),)
    np.testing.assert_array_equal(row, [11.0, 22.0])


def test_aggregating_a_scalar_is_an_error() -> None:
    with pytest.raises(EvaluationError, match="instant vector"):
        ev("sum(1)", RawStore())


def test_set_operators() -> None:
    s = store_of(
        ("a", {"i": "1", "j": "x"}, [290.0], [1.0]),
        ("a", {"i": "2", "j": "x"}, [290.0], [2.0]),
        ("b", {"i": "1", "j": "y"}, [290.0], [9.0]),
    )
    assert [v[0] for v in ev("a and on (i) b", s).values()] == [1.0]
    assert ev("a and b", s) == {}
    assert [v[0] for v in ev("a unless on (i) b", s).values()] == [2.0]
    assert sorted(v[0] for v in ev("a or on (i) b", s).values()) == [1.0, 2.0]
    assert sorted(v[0] for v in ev("a or b", s).values()) == [1.0, 2.0, 9.0]


def test_aggregations_drop_the_name_and_group() -> None:
    s = store_of(*[("g", {"i": str(k % 2), "k": str(k)}, [290.0], [float(k)]) for k in range(4)])
    assert ev("sum by (i) (g)", s) == {
        (("i", "0"),): pytest.approx([2.0]),
        (("i", "1"),): pytest.approx([4.0]),
    }
    assert list(ev("avg without (k) (g)", s)) == [(("i", "0"),), (("i", "1"),)]
    assert next(iter(ev("count(g)", s).values()))[0] == 4
    assert next(iter(ev("max(g) - min(g)", s).values()))[0] == 3


@pytest.mark.parametrize(
    ("q", "les", "counts", "want"),
    [
        (0.5, ["0.1", "1", "+Inf"], [10, 20, 20], 0.1),  # rank 10: top of the first bucket
        (0.75, ["0.1", "1", "+Inf"], [10, 20, 20], 0.55),  # halfway through (0.1, 1]
        (0.99, ["0.1", "1", "+Inf"], [10, 20, 40], 1.0),  # in +Inf: the second-highest bound
        (0.5, ["0.1", "1"], [10, 20], math.nan),  # no +Inf bucket
        (0.5, ["0.1", "+Inf"], [0, 0], math.nan),  # no observations
        (0.1, ["-1", "1", "+Inf"], [5, 10, 10], -1.0),  # lowest bound <= 0 is returned
        (0.7, ["1", "2", "3", "4", "+Inf"], [3, 6, 4, 8, 10], 3.5),  # not monotonic: 4 → 6
        (0.5, ["1", "1.0", "+Inf"], [4, 6, 20], 1.0),  # equal bounds are merged (4 + 6)
        (1.5, ["1", "+Inf"], [4, 6], INF),
        (-1, ["1", "+Inf"], [4, 6], -INF),
        (0.5, ["1", "x", "+Inf"], [4, 99, 8], 1.0),  # an unparsable bound is ignored
    ],
)
def test_histogram_quantile(q: float, les: list[str], counts: list[float], want: float) -> None:
    got = histogram_quantile(q, les, np.array(counts, dtype=np.float64)[:, None])
    np.testing.assert_allclose(got, [want])


def test_histogram_quantile_with_a_bucket_absent_at_some_points() -> None:
    rows = np.array([[10.0, 10.0], [20.0, np.nan], [20.0, 20.0]])
    got = histogram_quantile(0.75, ["0.1", "1", "+Inf"], rows)
    np.testing.assert_allclose(got, [0.55, 0.1])  # at point 1 only 0.1 and +Inf are present


def test_time_is_each_points_evaluation_time() -> None:
    s = store_of(
        ("kube_pod_start_time", {"pod": "old"}, [240.0, 300.0, 360.0], [-1e6] * 3),
        ("kube_pod_start_time", {"pod": "new"}, [240.0, 300.0, 360.0], [200.0] * 3),
    )
    got = ev("(time() - kube_pod_start_time) < bool 900", s, start=240.0, n=3)
    assert got[(("pod", "new"),)].tolist() == [1.0, 1.0, 1.0]
    assert got[(("pod", "old"),)].tolist() == [0.0, 0.0, 0.0]


def test_a_series_without_samples_is_not_stored() -> None:
    s = store_of(("x", {"i": "a"}, [], []), ("x", {"i": "b"}, [1.0], [2.0]))
    assert [r.label_map for r in s.series("x")] == [{"i": "b"}]
