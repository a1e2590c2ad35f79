"""The draft: every section the seed asks for, prefilled with figures, in blameless words."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest
from pm_samples import START, incident_0217

from infersight.bundle import write_bundle
from infersight.frame import MetricFrame
from infersight.postmortem import InputError, load_incident, new, read_audit
from infersight.postmortem.draft import BLAMELESS, body, front_matter
from infersight.postmortem.inputs import Incident
from infersight.report import render_json
from infersight.runbooks.choose import for_diagnosis

SECTIONS = ["## Timeline", "## Symptoms", "## Investigation: what was ruled out, and why",
            "## Root causes and the chain", "## Remediation", "## Action items"]  # fmt: skip


def test_sections_figures_and_blanks() -> None:
    text = body(Incident(incident_0217()))
    positions = [text.index(s) for s in SECTIONS]
    assert positions == sorted(positions)
    assert BLAMELESS in text
    assert "`service.queue_length 3 → 180 (60×)`" in text  # a symptom with its figures
    assert "Gpu thermal throttling (`gpu_thermal_throttling`): infra.gpu\\_temp\\_c" in text
    assert "Chain: `vector_db_swap` → `queue_backlog` → `latency_high`" in text
    assert "Remedy for vector\\_db\\_swap. (runbook: vector\\_db\\_swap-book)" in text
    items = text.split("## Action items")[1]
    assert re.search(r"\| Lasting fix for: .* \| \| \| open \|", items)  # owner left blank
    assert "`access.5xx_ratio`" in items


def test_timeline_in_time_order_with_actions() -> None:
    audit = Incident(incident_0217()).actions
    assert audit == ()
    from infersight.postmortem.inputs import Action

    inc = Incident(
        incident_0217(), (Action(START + 3000, "Runbook cache-resize step 2: ok", "audit log"),)
    )
    rows = body(inc).split("## Timeline")[1].split("## Symptoms")[0]
    times = re.findall(r"^\| (2026-03-14 \d\d:\d\d) \|", rows, re.M)
    assert times == sorted(times) and len(times) >= 5
    assert "Runbook cache-resize step 2: ok | audit log" in rows
    assert rows.index("Began: Cache capacity") < rows.index("Began: Vector db swap")


def test_blameless_words_only() -> None:
    text = body(Incident(incident_0217())).replace(BLAMELESS, "")
    for word in ("blame", "fault of", "should have", "careless", "human error", "mistake"):
        assert word not in text.lower()


def test_front_matter_prefilled_from_the_diagnosis() -> None:
    fm = front_matter(Incident(incident_0217()), ["rag-api"])
    assert fm.id == "2026-03-14-vector-db-swap" and fm.status == "draft"
    assert fm.root_causes == ["vector_db_swap", "cache_capacity"]
    assert fm.layers == ["service", "dependency"]
    assert fm.signature.onset_order[:2] == ["cache_capacity", "vector_db_swap"]
    assert fm.signature.figures["dependency.vector_query_p99"] == 40.0
    assert fm.services == ["rag-api"] and fm.started is not None
    assert (fm.started.hour, fm.started.minute) == (2, 14)  # the cache, three minutes early


def test_from_a_report_and_from_a_bundle_with_its_capture(tmp_path: Path) -> None:
    # the report records the runbooks chosen for the stack, and the stack assumed
    dx = for_diagnosis(incident_0217())
    report = tmp_path / "report.json"
    report.write_text(render_json(dx))
    assert load_incident(report).diagnosis == dx
    frame = MetricFrame(START, 15.0, 4).with_series("service.queue_length", ["a"], [[1, 2, 3, 4]])
    bundle = write_bundle(tmp_path / "scene.tar.gz", {"incident": frame}, {"kind": "test"},
                          artifacts={"diagnosis.json": render_json(dx).encode()})  # fmt: skip
    inc = load_incident(bundle)
    assert inc.diagnosis == dx and inc.actions[0].source == "capture"
    entry, _ = new(inc, tmp_path / "lib")
    assert "Evidence captured in scene.tar.gz" in entry.body


@pytest.mark.parametrize(
    ("content", "says"),
    [("{}", "not an infersight diagnosis"), ("{", "not JSON"),
     (json.dumps({"schema": "infersight.diagnosis", "schema_version": 99}), "schema version")],
)  # fmt: skip
def test_bad_reports_are_one_line(tmp_path: Path, content: str, says: str) -> None:
    path = tmp_path / "r.json"
    path.write_text(content)
    with pytest.raises(InputError, match=says):
        load_incident(path)


def test_audit_log_lines_read_and_bad_ones_named(tmp_path: Path) -> None:
    log = tmp_path / "audit.jsonl"
    log.write_text(
        '{"ts": "2026-03-14T02:40:00Z", "runbook": "vectordb-memory", "step": 1, "outcome": "ok"}\n'
        "not json\n"
        '{"ts": 1773456000, "runbook": "cache-resize", "outcome": "dry-run"}\n'
        '{"runbook": "no-time"}\n'
    )
    actions, problems = read_audit(log)
    assert [a.what for a in actions] == ["Runbook vectordb-memory step 1: ok",
                                         "Runbook cache-resize: dry-run"]  # fmt: skip
    assert [p.split(": ", 1)[0].rsplit(":", 1)[1] for p in problems] == ["2", "4"]


def test_audit_log_written_by_runbook_run_is_read(tmp_path: Path) -> None:
    """The log `infersight runbook run` appends to, read by the postmortem draft."""
    from infersight.runbooks.audit import AuditLog

    path = tmp_path / "audit.jsonl"
    with AuditLog(path) as audit:
        audit.write("run-start", run="r1", runbook="cache-resize", mode="execute")
        audit.write("run-end", run="r1", runbook="cache-resize", outcome="verified")
    actions, problems = read_audit(path)
    assert problems == []
    assert [a.what for a in actions] == [
        "Runbook cache-resize run-start",
        "Runbook cache-resize run-end: verified",
    ]
    assert all(abs(a.ts - time.time()) < 600 for a in actions)
