"""Healthy output is quiet (issue 39): under "nothing is wrong" a change weaker than an incident
(`DiagnoseConfig.unhealthy_shift`) is not listed as a finding in any text report; JSON keeps
it, and a report that is not an all-clear still lists it."""

from __future__ import annotations

import io
import json
from dataclasses import replace

from report_samples import ONSET, healthy, unchecked, windows
from rich.console import Console

from infersight.diagnose.config import DiagnoseConfig
from infersight.diagnose.result import Diagnosis, UnexplainedChange
from infersight.report import render, render_markdown, render_terminal
from infersight.report.firstscreen import render_brief

NOISE = UnexplainedChange(
    "service.queue_wait_p99", "infer-1", "service", 0.0775,
    "service.queue_wait_p99 on infer-1 changed (deviation, up): 12 ms → 12.1 ms, shift 0.0775 σ;"
    " no known failure mode explains it", ONSET, 0.012, 0.0121,
)  # fmt: skip


def _texts(d: Diagnosis) -> dict[str, str]:
    out = {}
    for full in (False, True):
        buf = io.StringIO()
        render_terminal(d, Console(file=buf, width=200, color_system=None), full=full)
        out[f"terminal full={full}"] = buf.getvalue()
        out[f"markdown full={full}"] = render_markdown(d, full=full)
    out["brief"] = render_brief(d)
    return out


def test_a_change_below_an_incident_is_not_listed_under_an_all_clear() -> None:
    assert NOISE.score < DiagnoseConfig().unhealthy_shift
    d = replace(healthy(), unexplained=(NOISE,))
    for name, text in _texts(d).items():
        assert "0.0775" not in text and "queue_wait_p99" not in text, (name, text)
        assert "Changed" not in text and "changed:" not in text, (name, text)
        assert "nexplained" not in text, (name, text)
    doc = json.loads(render(d, "json", windows(d)))
    assert [u["signal"] for u in doc["unexplained"]] == ["service.queue_wait_p99"]


def test_the_same_change_is_listed_where_the_verdict_is_not_an_all_clear() -> None:
    d = replace(unchecked(), unexplained=(NOISE,))
    texts = _texts(d)
    assert "shift 0.0775 σ" in texts["terminal full=False"]
    assert "shift 0.0775 σ" in texts["markdown full=True"]
