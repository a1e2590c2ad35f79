"""The manifest names, per window and signal, the family and the PromQL its series came from
(issue 39); a bundle written before the record (schema version 1) is read as before."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bundle_helpers import make_frame

from infersight.bundle import BundleError, read_bundle, write_bundle
from infersight.provenance import QueryRun

SOURCE = {"kind": "prometheus", "url": "http://prom:9090"}


def _runs(start: float, end: float) -> tuple[QueryRun, ...]:
    def run(signal: str, family: str, expr: str) -> QueryRun:
        return QueryRun(signal, family, expr, "2m", start, end, 15.0)

    return (
        run("service.queue_length", "vllm", "sum by (instance) (vllm:num_requests_waiting)"),
        run("inference.gpu_util", "triton", "avg by (instance) (nv_gpu_utilization)"),
        run("inference.gpu_util", "dcgm", "avg by (instance) (DCGM_FI_DEV_GPU_UTIL < 1e15) / 100"),
    )


def test_the_manifest_names_each_signals_family_and_expression(tmp_path: Path) -> None:
    incident = make_frame()
    baseline = make_frame(start=incident.start - 3600, seed=1)
    runs = _runs(incident.start, incident.end + 5)
    base_runs = _runs(baseline.start, baseline.end + 5)[:1]
    path = write_bundle(
        tmp_path / "b.tar.gz",
        {"incident": incident, "baseline-1h": baseline},
        SOURCE,
        queries={"incident": runs, "baseline-1h": base_runs},
    )
    b = read_bundle(path)
    assert b.runs == runs  # the incident window's, as recorded, best family first
    assert b.manifest.runs("baseline-1h") == base_runs
    record = b.manifest.model_dump(mode="json")["queries"]["incident"]
    assert record["rate_window"] == "2m" and record["step"] == 15.0
    assert record["end"] == incident.end + 5
    assert record["signals"]["inference.gpu_util"] == [
        {"family": "triton", "expr": "avg by (instance) (nv_gpu_utilization)"},
        {"family": "dcgm", "expr": "avg by (instance) (DCGM_FI_DEV_GPU_UTIL < 1e15) / 100"},
    ]


def _rewrite(path: Path, change: object) -> None:
    """Edit a directory bundle's manifest (sha256s of the members are unaffected)."""
    m = path / "manifest.json"
    doc = json.loads(m.read_text())
    change(doc)  # type: ignore[operator]
    m.write_text(json.dumps(doc))


def test_a_bundle_without_the_record_is_read_and_says_none(tmp_path: Path) -> None:
    frame = make_frame()
    path = write_bundle(tmp_path / "old", {"incident": frame}, SOURCE)

    def version_1(doc: dict[str, object]) -> None:
        doc["schema_version"] = 1
        doc.pop("queries")

    _rewrite(path, version_1)
    b = read_bundle(path)
    assert b.manifest.schema_version == 1 and b.runs == ()


@pytest.mark.parametrize(
    ("change", "said"),
    [
        (lambda q: q.update(nowhere=q["incident"]), "nowhere is no window"),
        (lambda q: q["incident"]["signals"].update({"x.bogus": [{"family": "a", "expr": "up"}]}),
         "x.bogus"),
        (lambda q: q["incident"]["signals"]["service.queue_length"][0].update(expr=" "),
         "must not be empty"),
        (lambda q: q["incident"]["signals"].update({"service.queue_length": []}), "at least 1"),
        (lambda q: q["incident"].update(step=0), "step"),
        (lambda q: q["incident"].update(end=1e15), "outside the years"),
    ],
)  # fmt: skip
def test_a_damaged_record_is_refused_in_one_line(tmp_path: Path, change: object, said: str) -> None:
    frame = make_frame()
    path = write_bundle(
        tmp_path / "b", {"incident": frame}, SOURCE,
        queries={"incident": _runs(frame.start, frame.end)},
    )  # fmt: skip
    _rewrite(path, lambda doc: change(doc["queries"]))  # type: ignore[operator]
    with pytest.raises(BundleError) as err:
        read_bundle(path)
    assert said in str(err.value) and "\n" not in str(err.value)
