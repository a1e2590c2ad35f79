"""JSON report: the schema tag, strict JSON, the schema file, and the round trip."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from typing import Any

import pytest
from minischema import validate
from report_samples import healthy, hostile, incident, on_path, unchecked

from infersight.diagnose.result import SCHEMA_VERSION, Diagnosis
from infersight.report import diagnosis_schema, render_json
from infersight.runbooks.choose import for_diagnosis

SAMPLES = {
    "incident": incident,
    "healthy": healthy,
    "unchecked": unchecked,
    "hostile": hostile,
    # the root's place on the request path: node, bottleneck, trigger, a limit's trigger
    "on_path": on_path,
}


@pytest.mark.parametrize("name", SAMPLES)
def test_output_is_valid_against_the_schema(name: str) -> None:
    doc = json.loads(render_json(SAMPLES[name]()))
    assert doc["schema"] == "infersight.diagnosis"
    assert doc["schema_version"] == SCHEMA_VERSION
    assert validate(doc, diagnosis_schema()) == []


@pytest.mark.parametrize("name", SAMPLES)
def test_round_trips_through_from_dict(name: str) -> None:
    d = SAMPLES[name]()
    # the report is the diagnosis with each runbook chosen for its stack (runbooks/choose.py)
    assert Diagnosis.from_dict(json.loads(render_json(d))) == for_diagnosis(d)


def test_seen_before_is_valid_against_the_schema_and_hostile_text_stays_inert() -> None:
    from infersight.report import render
    from infersight.report.seen_before import PastIncident

    why = ("same root causes: vector_db_swap",)
    past = PastIncident(
        "2026-03-14-vector-db-swap", "2026-03-14", HOSTILE_TITLE, "more RAM", 0.93, why, "x.md"
    )
    doc = json.loads(render_json(incident(), seen=[past]))
    assert doc["seen_before"][0]["fixed_by"] == "more RAM"
    assert validate(doc, diagnosis_schema()) == []
    assert validate({**doc, "seen_before": [{"id": 1}]}, diagnosis_schema()) != []
    assert "seen_before" not in json.loads(render_json(incident()))  # no library: no key
    assert json.loads(render_json(incident(), seen=[]))["seen_before"] == []
    html = render(incident(), "html", seen=[past])
    assert "<script>" not in html.split("<style>")[0] + html.split("</style>")[1]
    assert "seen before: 2026-03-14, &lt;script&gt;" in html
    md = render(incident(), "md", seen=[past])
    assert "seen before: 2026-03-14, \\<script\\>" in md
    for fmt in ("text", "brief"):
        assert "fixed by more RAM" in " ".join(render(incident(), fmt, seen=[past]).split())
    assert "nothing similar in the postmortem library" in render(incident(), "brief", seen=[])


HOSTILE_TITLE = '<script>alert("x")</script>'


def test_schema_catches_what_it_should() -> None:
    schema = diagnosis_schema()
    good: dict[str, Any] = json.loads(render_json(incident()))

    def broken(change: Any) -> list[str]:
        doc = json.loads(json.dumps(good))
        change(doc)
        return validate(doc, schema)

    assert broken(lambda d: d.pop("root_causes"))
    assert broken(lambda d: d.update(schema_version=SCHEMA_VERSION + 1))
    assert broken(lambda d: d.pop("unchecked_causes"))
    assert broken(lambda d: d["unchecked_causes"][0].update(would_explain=[]))
    assert broken(lambda d: d["hypotheses"][0].update(verdict="maybe"))
    assert broken(lambda d: d["hypotheses"][0]["evidence"][0].update(supports="yes"))
    assert broken(lambda d: d["hypotheses"][0]["evidence"][0].update(extra=1))
    assert broken(lambda d: d["root_causes"][0].update(rank=1.5))
    assert broken(lambda d: d["root_causes"][0].update(confidence=1.2))
    assert broken(lambda d: d["missing_signals"].update(x=3))


def test_schema_lists_every_field_of_the_dataclasses() -> None:
    schema = diagnosis_schema()
    top = set(incident().to_dict()) | {"schema"}
    # `queries` (the PromQL behind each finding) and `seen_before` (past incidents like it,
    # with a postmortem library) are the report's own additions
    assert set(schema["properties"]) == top | {"queries", "seen_before"}
    assert top == set(schema["required"])
    h = incident().hypotheses[0]
    assert set(schema["$defs"]["hypothesis"]["properties"]) == set(
        h.to_dict() if hasattr(h, "to_dict") else vars(h)
    )
    assert set(schema["$defs"]["evidence"]["properties"]) == set(vars(h.evidence[0]))
    assert set(schema["$defs"]["root_cause"]["properties"]) == set(vars(on_path().root_causes[0]))
    assert set(schema["$defs"]["unexplained"]["properties"]) == set(vars(incident().unexplained[0]))
    assert set(schema["$defs"]["unchecked_cause"]["properties"]) == set(
        vars(incident().unchecked_causes[0])
    )


def test_reads_a_version_2_document() -> None:
    """Version 2 had no undecided refutes: such a file loads with none."""
    doc = json.loads(render_json(incident()))
    for h in doc["hypotheses"]:
        h.pop("refute_undecided")
        h.pop("refute_missing")
    doc["schema_version"] = 2
    d = Diagnosis.from_dict(doc)
    assert not any(h.refute_undecided or h.refute_missing for h in d.hypotheses)
    assert d.root_causes == incident().root_causes


def test_reads_a_version_1_document() -> None:
    """Version 1 had no unchecked causes; such a file still loads."""
    doc = json.loads(render_json(incident()))
    doc.pop("unchecked_causes")
    doc["schema_version"] = 1
    d = Diagnosis.from_dict(doc)
    assert d.unchecked_causes == () and d.root_causes == incident().root_causes
    with pytest.raises(ValueError, match="schema version 0"):
        Diagnosis.from_dict({**doc, "schema_version": 0})


def test_non_finite_numbers_become_null() -> None:
    d = incident()
    h = d.hypotheses[0]
    e = replace(h.evidence[0], baseline=math.nan, observed=math.inf)
    d = replace(d, hypotheses=(replace(h, evidence=(e,)), *d.hypotheses[1:]))
    text = render_json(d)
    assert "NaN" not in text and "Infinity" not in text
    doc = json.loads(text)
    assert doc["hypotheses"][0]["evidence"][0]["baseline"] is None
    assert validate(doc, diagnosis_schema()) == []


def test_compact_output() -> None:
    assert "\n" not in render_json(healthy(), indent=None).strip()
