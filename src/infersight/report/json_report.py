"""The diagnosis as JSON: `Diagnosis.to_dict()` under a schema tag, strict JSON (no NaN).

`diagnosis.schema.json` (JSON Schema 2020-12, next to this module) describes the document;
`Diagnosis.from_dict` reads it back.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from importlib import resources
from typing import Any, cast

from infersight.diagnose.result import SCHEMA_VERSION, Diagnosis
from infersight.report.links import Links, query_document
from infersight.report.seen_before import PastIncident

SCHEMA_NAME = "infersight.diagnosis"


def _finite(value: Any) -> Any:
    """NaN and ±inf (not JSON) become null; containers are walked."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(k): _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


def diagnosis_document(
    diagnosis: Diagnosis,
    links: Links | None = None,
    seen: Sequence[PastIncident] | None = None,
) -> dict[str, Any]:
    """The JSON document as a dict: schema tag first, then every field of the diagnosis, then
    `queries`: per signal a finding reads, the PromQL behind it (and its links, when the
    Prometheus or Grafana URL is known); then `seen_before`, the past incidents like it, when a
    postmortem library was searched (an empty list: nothing similar there)."""
    from infersight.runbooks.choose import for_diagnosis

    # each runbook the one for the stack the exporters reveal, and that stack in `source`
    diagnosis = for_diagnosis(diagnosis)
    body = _finite(diagnosis.to_dict())
    doc = {"schema": SCHEMA_NAME, "schema_version": SCHEMA_VERSION, **body}
    doc["queries"] = query_document(diagnosis, links)
    if seen is not None:
        doc["seen_before"] = _finite([p.to_dict() for p in seen])
    return doc


def render_json(
    diagnosis: Diagnosis,
    indent: int | None = 2,
    links: Links | None = None,
    seen: Sequence[PastIncident] | None = None,
) -> str:
    doc = diagnosis_document(diagnosis, links, seen)
    return json.dumps(doc, indent=indent, ensure_ascii=False, allow_nan=False) + "\n"


def diagnosis_schema() -> dict[str, Any]:
    """The JSON Schema of the document `render_json` writes."""
    text = resources.files("infersight.report").joinpath("diagnosis.schema.json").read_text("utf-8")
    return cast(dict[str, Any], json.loads(text))
