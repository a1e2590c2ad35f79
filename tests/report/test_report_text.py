"""Terminal and Markdown reports: every section, figures in human units, user text inert."""

from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import replace

import pytest
from report_samples import CHAIN, HOSTILE, healthy, incident, unchecked
from rich.console import Console

from infersight.diagnose.result import Diagnosis
from infersight.report import render_markdown, render_terminal, render_text

FIGURES = ["20 ms → 800 ms", "95% → 60%", "70% → 40%", "380 ms → 4.1 s", "0.1% → 5%",
           "57.6 GiB → 77.6 GiB", "0/s → 2,400/s"]  # fmt: skip


def terminal(d: Diagnosis) -> str:
    buf = io.StringIO()
    render_terminal(d, Console(file=buf, width=400, color_system=None), full=True)
    return buf.getvalue()


def markdown(d: Diagnosis) -> str:
    return render_markdown(d, full=True)


#: the full reports (-v/--full); the first screen has tests of its own (test_first_screen.py)
RENDERERS: dict[str, Callable[[Diagnosis], str]] = {
    "terminal": terminal,
    "markdown": markdown,
}


def _plain(text: str) -> str:
    """Markdown escapes undone, so content checks read the same for both renderers."""
    return text.replace("\\", "")


@pytest.mark.parametrize("name", RENDERERS)
def test_incident_shows_every_section(name: str) -> None:
    d = incident()
    out = _plain(RENDERERS[name](d))
    assert "2 root causes" in out
    for title in ("Vector DB index swapped out of RAM", "Cache too small for the working set"):
        assert title in out
    assert "86%" in out and "74%" in out
    chain = " → ".join(d.hypothesis(h).title for h in CHAIN)  # type: ignore[union-attr]
    assert chain in out
    for h in d.by_verdict("confirmed"):
        for e in h.evidence:
            assert e.statement in out, e.statement
    for fig in FIGURES:  # "a → b", or both sides in the sentence that states them
        assert fig in out or all(side in out for side in fig.split(" → ")), fig
    assert "Ruled out" in out and "GPU thermal throttling" in out
    assert "GPU temperature 66 °C, below the 80 °C throttle point (64 °C before)" in out
    assert "Could not be checked" in out
    assert "Possible upstream causes that could not be checked" in out
    assert (
        "Log disk I/O stalls (disk_io) would explain Vector DB index swapped out of RAM; "
        "missing infra.disk_await, infra.io_pressure" in out
    )
    for sig in ("inference.model_load_time", "infra.disk_await", "infra.io_pressure"):
        assert sig in out
    assert "Resident memory on infer-2 grew from 6.1 GiB to 7.9 GiB" in out
    for action in d.next_actions:
        assert action.replace("`", "") in out.replace("`", "")
    assert "node_exporter is not scraped on infer-*" in out
    assert "All requests" in out and "Continuous" in out and "The whole cluster" in out
    assert "Runbook" in out and "runbooks/vector-db-memory.md" in out
    # the root's onset is its earliest evidence (02:15:30), not the engine's 02:16:30
    assert "onset 02:15:30 UTC" in out or "since 02:15 UTC" in out
    # the cache root stands without one of its refuting checks: said, with the signal to add
    assert (
        "Not ruled out: a check that would rule it out could not be made: it needs "
        "dependency.cache_concurrent_loads" in out.replace("`", "")
    )
    assert out.count("Not ruled out") == 1


def test_an_undecided_refute_without_missing_signals_is_still_said() -> None:
    from infersight.report.view import not_ruled_out

    h = replace(incident().hypotheses[0], refute_undecided=True)
    assert not_ruled_out(h) == (
        "a check that would rule it out could not be decided (no trusted readings)"
    )
    assert not_ruled_out(incident().hypotheses[0]) is None


@pytest.mark.parametrize("name", RENDERERS)
def test_healthy_names_a_large_change_no_rule_explains(name: str) -> None:
    """A GPU 20 °C above its own past that has not throttled yet is no incident, but
    "nothing is wrong" would hide it; a change under the notable bar stays unnamed."""
    from infersight.diagnose.result import UnexplainedChange

    def change(score: float) -> UnexplainedChange:
        return UnexplainedChange(
            "infra.gpu_temp_c", "infer-1", "infrastructure", score,
            f"infra.gpu_temp_c on infer-1 changed (deviation, up): 60 °C → 80 °C, shift "
            f"{score:.1f} σ; no known failure mode explains it",
        )  # fmt: skip

    out = _plain(RENDERERS[name](replace(healthy(), unexplained=(change(7.5),))))
    assert "Nothing is wrong" not in out and "No incident" in out
    assert "Worth a look: infra.gpu_temp_c on infer-1 changed" in out and "7.5 σ" in out
    quiet = _plain(RENDERERS[name](replace(healthy(), unexplained=(change(3.0),))))
    assert "Nothing is wrong" in quiet and "Worth a look" not in quiet


@pytest.mark.parametrize("name", RENDERERS)
def test_healthy_says_so_plainly(name: str) -> None:
    out = _plain(RENDERERS[name](healthy()))
    assert "Nothing is wrong" in out
    assert "2 hypotheses checked and ruled out" in out
    assert "Checked and ruled out" in out and "GPU thermal throttling" in out
    assert "Root cause" not in out
    assert "No requests affected" in out


@pytest.mark.parametrize("name", RENDERERS)
def test_inconclusive_names_missing_signals(name: str) -> None:
    out = _plain(RENDERERS[name](unchecked()))
    assert "no root cause could be confirmed" in out
    assert "Model cold start from remote storage" in out
    assert "infra.disk_await, infra.io_pressure" in out.replace("`", "")
    assert "Part of the requests" in out and "Intermittent" in out and "One instance" in out
    assert "eu-west-1" in out  # a scope key the renderer does not know is still shown
    assert "Scrape node_exporter on infer-*" in out


def test_terminal_does_not_read_user_text_as_markup() -> None:
    d = incident()
    h = d.hypotheses[0]
    e = replace(h.evidence[0], statement="P99 [bold]up[/bold] on [red]x[/red]")
    d = replace(d, hypotheses=(replace(h, evidence=(e,)), *d.hypotheses[1:]))
    assert "P99 [bold]up[/bold] on [red]x[/red]" in terminal(d)


def test_text_file_has_no_colour_codes() -> None:
    text = render_text(incident())
    assert "\x1b[" not in text and "Vector DB index swapped out of RAM" in text


def test_markdown_escapes_user_text() -> None:
    d = incident()
    h = d.hypotheses[0]
    e = replace(h.evidence[0], statement=f"a | b {HOSTILE}", instance="x`|y")
    d = replace(d, hypotheses=(replace(h, evidence=(e,)), *d.hypotheses[1:]))
    out = render_markdown(d, full=True)
    assert "<script>" not in out
    assert r"a \| b \<script\>" in out
    row = next(line for line in out.splitlines() if "a \\| b" in line)
    assert row.replace("\\|", "").count("|") == 7  # six cells, no extra column


def test_a_finding_on_many_instances_reads_as_one_line() -> None:
    from dataclasses import replace

    from infersight.diagnose.result import Evidence
    from infersight.report.view import condense

    base = Evidence(
        "service.queue_wait_p99", "node-0", "deviation", True, "queue wait up", 0.0, 60.0,
        0.3, 19.0, "s", 10.0,
    )  # fmt: skip
    many = tuple(replace(base, instance=f"node-{k}", observed=19.0 + k) for k in range(8))
    one = condense((*many, replace(base, signal="inference.gpu_util", kind="deviation")))
    assert len(one) == 2
    assert one[0].instance == "node-0"
    assert "the same on 7 more instances: node-1" in one[0].statement
    assert "19 s–26 s" in one[0].statement
    two = condense(many[:2])
    assert two == many[:2]  # a pair is shown as it is
