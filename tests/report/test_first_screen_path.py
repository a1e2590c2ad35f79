"""Issue 37 on the first screen: a root that sent more work is named the trigger, the node where
its work piled up the bottleneck, in words a person reads; a limit named beside a trigger says
so; the remedy goes on to where the work piled up. Terminal, Markdown, `--brief` and HTML alike.
"""

from __future__ import annotations

import html
import io
from dataclasses import replace
from pathlib import Path

from report_samples import incident, on_path
from rich.console import Console

from infersight.diagnose.result import Diagnosis
from infersight.lab.evaluate.path_cases import load_cases
from infersight.report import render_html, render_markdown, render_terminal
from infersight.report.firstscreen import first_screen, render_brief
from infersight.report.pathwords import node_words, nodes_words

CASES = Path(__file__).parents[1] / "diagnose" / "cases"

CACHE = (
    "the cache redis-0 sent more work: dependency.cache_hit_ratio 95% → 60% (0.63×) since "
    "02:14 (trigger) → piled up at the retrieval backend milvus-0 (bottleneck) → ran into the "
    "limit #3"
)
VECTOR_DB = (
    "the host milvus-0: dependency.vector_query_p99 20 ms → 800 ms (40×) since 02:15 → piled up "
    "at the hop between the gateway and the engines (the API, without metrics) (bottleneck)"
)
LIMIT = (
    "the service on infer-1, a limit the work of #1 (the cache redis-0) ran into: "
    "service.queue_wait_p99 50 ms → 31 s (620×) since 02:18 → piled up there (bottleneck)"
)
UNNAMED = (
    "the engine on infer-0 and infer-1: inference.prefix_cache_hit_ratio 60% → 20% (0.33×) "
    "since 02:17 → piled up at the service on infer-0 (bottleneck)"
)
CACHE_DO = (
    "Raise maxmemory to hold the working set; add singleflight on cache misses; and where it "
    "piled up: the retrieval backend milvus-0."
)


def flat(text: str) -> str:
    """One line, as a reader takes the wrapped text in."""
    return " ".join(text.split())


def short(d: Diagnosis) -> str:
    buf = io.StringIO()
    render_terminal(d, Console(file=buf, width=100, color_system=None))
    return flat(buf.getvalue())


def full(d: Diagnosis) -> str:
    buf = io.StringIO()
    render_terminal(d, Console(file=buf, width=100, color_system=None), full=True)
    return flat(buf.getvalue())


def markdown(d: Diagnosis) -> str:
    return flat(render_markdown(d).replace("\\", ""))


def page(d: Diagnosis) -> str:
    return flat(html.unescape(render_html(d)))


RENDERERS = {
    "terminal": short,
    "terminal --full": full,
    "markdown": markdown,
    "brief": lambda d: flat(render_brief(d)),
    "html": page,
}


def test_nodes_in_words() -> None:
    assert node_words("service:node-0") == "the service on node-0"
    assert node_words("gpu:node-3") == "the GPU of node-3"
    assert node_words("hop").startswith("the hop between the gateway and the engines")
    assert node_words("reranker:rr-0") == "the reranker rr-0"  # a user's own node
    engines = [f"engine:node-{i}" for i in range(8)]
    assert nodes_words(engines[:2]) == "the engine on node-0 and node-1"
    assert nodes_words(engines) == "the engine on node-0, node-1, node-2 and 5 more"
    assert nodes_words(["host:vdb-0", "retrieval:vdb-0"]) == "the host vdb-0"


def test_every_renderer_names_the_trigger_and_the_bottleneck() -> None:
    d = on_path()
    for name, render in RENDERERS.items():
        out = render(d)
        for line in (CACHE, VECTOR_DB, UNNAMED):
            assert line in out, f"{name}: {line}\n{out}"


def test_a_limit_beside_a_trigger_says_so_and_the_trigger_names_it() -> None:
    d = on_path()
    s = first_screen(d)
    assert [r.path for r in s.roots][:3] == [CACHE, VECTOR_DB, LIMIT]
    for name, render in RENDERERS.items():
        assert LIMIT in render(d), name


def test_the_remedy_goes_on_to_where_the_work_piled_up() -> None:
    d = on_path()
    s = first_screen(d)
    assert s.roots[0].remedy == CACHE_DO
    # a limit's work piled up at itself: its remedy is already there
    assert "piled up" not in s.roots[2].remedy
    for name, render in RENDERERS.items():
        assert CACHE_DO in render(d), name


def test_an_unnamed_root_shows_its_node_in_words_and_its_first_signals() -> None:
    d = on_path()
    (r,) = [r for r in first_screen(d).roots if r.id.startswith("change@")]
    assert r.path == UNNAMED
    assert r.figures == (
        "inference.prefix_cache_hit_ratio 60% → 20% (0.33×)",
        "service.ttft_p99 200 ms → 400 ms (2×)",
    )


def test_a_root_with_no_place_on_the_path_shows_no_path_line() -> None:
    d = incident()
    assert all(r.path == "" and "piled up" not in r.do for r in first_screen(d).roots)
    for name, render in RENDERERS.items():
        assert "piled up" not in render(d), name
        assert "path:" not in render(d).lower(), name
    # where the work piled up at no node (none stood out), the remedy is the root's own
    rc = replace(on_path().root_causes[1], bottleneck="")
    d = replace(on_path(), root_causes=(rc,))
    assert first_screen(d).roots[0].path == ""


def test_the_engine_names_the_trigger_beside_a_limit() -> None:
    """A surge the replicas' memory could not hold: the cascade of OOMs is a limit named
    beside the surge, and the first screen says whose work it ran into."""
    (case,) = [c for c in load_cases(CASES) if c.name.startswith("more requests and the replicas")]
    dx = case.diagnose()
    ids = {r.hypothesis: r for r in dx.root_causes}
    limits = [r for r in dx.root_causes if r.triggered_by]
    assert limits, [(r.hypothesis, r.bottleneck, r.trigger) for r in dx.root_causes]
    for r in limits:
        assert r.triggered_by in ids
        line = next(x for x in first_screen(dx).roots if x.id == r.hypothesis)
        assert f"a limit the work of #{ids[r.triggered_by].rank} " in line.path
