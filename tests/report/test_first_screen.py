"""The answer on the first screen (issue 30): what the short terminal report, Markdown and
`--brief` say, in which order, and the findings it was seen to get wrong before."""

from __future__ import annotations

import io
from dataclasses import replace

from report_samples import ONSET, incident
from rich.console import Console

from infersight.diagnose.result import Diagnosis, UnexplainedChange
from infersight.report import render_markdown, render_terminal
from infersight.report.consequences import attribute, earliest_onset
from infersight.report.figures import format_score, tidy
from infersight.report.firstscreen import first_screen, render_brief
from infersight.units import format_ratio


def short(d: Diagnosis, width: int = 100) -> str:
    buf = io.StringIO()
    render_terminal(d, Console(file=buf, width=width, color_system=None))
    return buf.getvalue()


def full(d: Diagnosis) -> str:
    buf = io.StringIO()
    render_terminal(d, Console(file=buf, width=200, color_system=None), full=True)
    return buf.getvalue()


def swap_used(instance: str = "milvus-0", onset: float = ONSET + 120) -> UnexplainedChange:
    return UnexplainedChange(
        "infra.swap_used_ratio", instance, "infrastructure", 100.0,
        f"infra.swap_used_ratio on {instance} changed (deviation, up): 0% → 98.2%, shift 100.0 σ;"
        " no known failure mode explains it", onset, 0.0, 0.982,
    )  # fmt: skip


def test_the_sections_come_in_the_order_an_on_call_reads_them() -> None:
    out = short(incident())
    order = [
        "2 root causes: Vector DB index swapped out of RAM (86%); cache too small",
        "#1 Vector DB index swapped out of RAM",
        "do: Give the vector DB node RAM",
        "#2 Cache too small for the working set",
        "do: Raise maxmemory",
        "chain: #1, #2 → Request queue backlog",
        "ruled out (",
        "Coverage gaps:",
    ]
    at = [out.index(marker) for marker in order]
    assert at == sorted(at), out
    assert out.count("root causes") == 1  # said once, not in a box and again below it
    assert "and Cache" not in out and "and The" not in out
    assert len(out.splitlines()) <= 30, out
    # ruled-out causes are ids on one line; why each was ruled out is behind --full
    assert "gpu_throttling" in out and "below the 80 °C throttle point" not in out
    assert "below the 80 °C throttle point" in full(incident())


def test_each_root_states_where_since_when_and_its_figures() -> None:
    s = first_screen(incident())
    one = s.roots[0]
    assert one.where == "milvus-0"
    assert "20 ms → 800 ms (40×)" in "; ".join(one.figures)
    assert one.runbook == "runbooks/vector-db-memory.md"


def test_a_roots_onset_is_its_earliest_evidence() -> None:
    """The engine dated the vector DB at 02:16:30; its memory fell from 02:15:30."""
    d = incident()
    h = d.hypothesis("vector_db_swap")
    assert h is not None and h.onset == ONSET - 30
    assert earliest_onset(h) == ONSET - 90
    assert first_screen(d).roots[0].since == ONSET - 90
    assert "since 02:15 UTC" in short(d)
    assert "onset 02:15:30 UTC" in full(d)


def test_consequences_of_a_root_are_also_seen_under_it_not_unexplained() -> None:
    far = swap_used("elsewhere-9")
    # an hour before the root, on its instance: not its doing
    before = replace(swap_used(onset=ONSET - 3600), signal="infra.disk_util")
    d = replace(incident(), unexplained=(swap_used(), far, before))
    a = attribute(d)
    assert a.also_seen == {"vector_db_swap": (swap_used(),)}
    assert a.unexplained == (far, before)
    out = short(d)
    assert "also seen: infra.swap_used_ratio 0% → 98.2% on milvus-0" in out
    assert "2 changes no known cause explains" in out
    text = full(d)
    unexplained = text[text.index("Unexplained changes") :]
    assert "swap_used_ratio @ milvus-0" not in unexplained
    assert "elsewhere-9" in unexplained and "disk_util @ milvus-0" in unexplained


def test_a_change_on_the_chains_instances_after_the_root_is_also_seen() -> None:
    kv = replace(swap_used("infer-2"), signal="inference.kv_cache_usage", layer="inference")
    d = replace(incident(), unexplained=(kv,))
    assert attribute(d).also_seen == {"vector_db_swap": (kv,)}


def test_figures_are_written_one_way() -> None:
    assert tidy("up to 13.4 s (63.45×), then (1.06e+03×) and 473×") == (
        "up to 13.4 s (63.5×), then (1,060×) and 473×"
    )
    assert tidy("shift 100.0 σ") == "shift 100 σ"
    assert [format_ratio(r) for r in (0.62, 1.41, 63.45, 1058.9, 2.0)] == [
        "0.62×", "1.41×", "63.5×", "1,060×", "2×",
    ]  # fmt: skip
    assert format_score(100.0) == "≥ 100" and format_score(7.46) == "7.5"
    h = incident().hypotheses[0]
    e = replace(h.evidence[0], statement="P99 up to 13.4 s (1.06e+03×), shift 100.0 σ")
    d = replace(incident(), hypotheses=(replace(h, evidence=(e,)), *incident().hypotheses[1:]))
    d = replace(d, unexplained=(swap_used("elsewhere-9"),))
    for out in (full(d), render_markdown(d, full=True)):
        assert "e+0" not in out and "1,060×" in out and "100.0 σ" not in out
        assert "score 1e+02" not in out and "≥ 100" in out


def test_a_reading_is_marked_by_what_it_says_and_the_failed_condition_by_its_own_mark() -> None:
    """A true fact that rules a cause out reads "▲ … up …  ✘ rules it out", not "✘ … up"."""
    text = full(incident())
    line = next(ln for ln in text.splitlines() if "GPU temperature 66 °C" in ln)
    assert line.split("GPU temperature")[0].strip().endswith("▲")
    assert line.rstrip().endswith("✘ rules it out")
    assert "✘ GPU temperature" not in text
    root = next(ln for ln in text.splitlines() if "Vector DB query P99 rose" in ln)
    assert "▲ Vector DB query P99" in root and root.rstrip().endswith("✔ for")


def test_next_actions_do_not_repeat_the_missing_signals() -> None:
    d = incident()
    make = "Make infra.disk_await available (scrape node_exporter) to check disk_io."
    d = replace(d, next_actions=(*d.next_actions, make))
    text = full(d)
    assert "Make infra.disk_await available" not in text
    assert "infra.disk_await: node_exporter is not scraped on infer-*; scrape node_exporter" in text


def test_markdown_and_brief_follow_the_same_order() -> None:
    d = incident()
    md = render_markdown(d).replace("\\", "")
    marks = ["2 root causes", "1. **Vector DB", "Do: Give", "2. **Cache", "**Chain:**",
             "**Ruled out (", "Coverage gaps"]  # fmt: skip
    at = [md.index(m) for m in marks]
    assert at == sorted(at)
    assert "## Ruled out" not in md and "## Ruled out" in render_markdown(d, full=True)
    brief = render_brief(d)
    assert len(brief.splitlines()) <= 12
    at = [brief.index(m) for m in ("2 root causes", "1. Vector DB", "Do: Give", "Chain:")]
    assert at == sorted(at)
