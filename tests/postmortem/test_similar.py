"""Similarity by what the incidents looked like, part by part."""

from __future__ import annotations

from pm_samples import CACHE, LATENCY, QUEUE, VECTOR, cache_only, diagnosis, hyp, incident_0217

from infersight.postmortem.signature import IncidentSignature, from_diagnosis
from infersight.postmortem.similar import compare, figure_closeness, order_agreement


def test_an_incident_is_most_like_itself() -> None:
    sig = from_diagnosis(incident_0217())
    s = compare(sig, sig)
    assert s.score == 1.0 and "same root causes" in s.why[0]


def test_nothing_shared_scores_nothing() -> None:
    a = IncidentSignature(("a",), ("service",), ("x",), ("a",), (("x", 2.0),))
    b = IncidentSignature(("b",), ("inference",), ("y",), ("b",), (("y", 2.0),))
    assert compare(a, b).score == 0.0


def test_a_shared_root_is_less_than_the_same_roots() -> None:
    full = from_diagnosis(incident_0217())
    part = from_diagnosis(cache_only())
    assert compare(full, part).score < compare(full, full).score
    assert "shares root cause: cache_capacity" in compare(full, part).why


def test_order_counts_which_began_first() -> None:
    assert order_agreement(["a", "b", "c"], ["a", "b", "c"]) == 1.0
    assert order_agreement(["a", "b", "c"], ["c", "b", "a"]) == 0.0
    assert order_agreement(["a", "b"], ["a", "c"]) == 1 / 3
    # the same parts, begun the other way round, is a different story
    readings = [(e.signal, e.instance, e.baseline, e.observed, e.unit) for e in VECTOR.evidence]
    early = CACHE.onset - 600  # type: ignore[operator]
    early_vector = hyp("vector_db_swap", "dependency", early, readings, root=True)  # type: ignore[arg-type]
    swapped = diagnosis([CACHE, early_vector, LATENCY, QUEUE], ["vector_db_swap", "cache_capacity"])
    base = from_diagnosis(incident_0217())
    assert compare(base, from_diagnosis(swapped)).score < compare(base, base).score
    assert VECTOR.onset != early_vector.onset


def test_figures_count_the_size_of_the_change() -> None:
    assert figure_closeness({"x": 40.0}, {"x": 40.0}, 4.0) == 1.0
    assert abs(figure_closeness({"x": 40.0}, {"x": 160.0}, 4.0) - 0.5) < 1e-9
    assert figure_closeness({"x": 40.0}, {"x": 1.1}, 4.0) < 0.2
    assert figure_closeness({"x": 40.0}, {"y": 40.0}, 4.0) == 0.0
