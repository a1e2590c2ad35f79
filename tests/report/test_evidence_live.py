"""Issue 39's bar, against a real Prometheus holding vLLM, ingress-nginx, Redis, Qdrant and
dcgm-exporter series (several catalog mappings per signal: Envoy, HAProxy, Triton, TGI and
infersight's own names map the same signals first): every link and every `queries` entry of the
JSON, HTML and Markdown reports returns series when run as written against that server; the
bundle manifest names each signal's family and expression; the symptom line and its plot are the
gateway's doubled P99, with its figures."""

from __future__ import annotations

import json
import math
import re
import time
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlparse

import pytest
from live_stack import GATEWAY, STEP, write_stack
from typer.testing import CliRunner

from infersight.bundle import read_bundle
from infersight.capture import CaptureRequest, capture
from infersight.cli import app
from infersight.exporters import load_catalog
from infersight.lab.live.servers import LocalPrometheus
from infersight.sources.connect import ConnectionSettings
from infersight.sources.prometheus import PrometheusClient
from infersight.timeparse import iso, parse_duration

pytestmark = [pytest.mark.server, pytest.mark.slow]

runner = CliRunner()
GRAFANA = "https://grafana.example"
#: (expr, start, end, step): a query as a report gives it to a reader
Shown = tuple[str, float, float, float]


def _prometheus_link(url: str) -> Shown:
    q = parse_qs(urlparse(url).query)
    end = datetime.strptime(q["g0.end_input"][0], "%Y-%m-%d %H:%M:%S")
    end_s = end.replace(tzinfo=UTC).timestamp()
    span = parse_duration(q["g0.range_input"][0])
    return q["g0.expr"][0], end_s - span, end_s, float(q["g0.step_input"][0])


def _grafana_link(url: str) -> Shown:
    state = json.loads(unquote(url.split("left=", 1)[1]))
    (query,) = state["queries"]
    rng = state["range"]
    step = parse_duration(query["interval"])
    return query["expr"], int(rng["from"]) / 1000, int(rng["to"]) / 1000, step


def _links(urls: Sequence[str]) -> Iterator[Shown]:
    for url in urls:
        if "/graph?" in url:
            yield _prometheus_link(url)
        elif "/explore?" in url:
            yield _grafana_link(url)


def _json_queries(doc: dict[str, object]) -> Iterator[Shown]:
    for signal, qs in doc["queries"].items():  # type: ignore[attr-defined]
        for q in qs:
            assert q["as_run"] is True, (signal, q)  # the query that produced the data
            yield q["expr"], q["start"], q["end"], q["step"]
            yield from _links(list(q["links"].values()))


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LocalPrometheus, float]]:
    from servers import require

    require("prometheus")
    require("promtool")
    tmp = tmp_path_factory.mktemp("stack")
    end = math.floor(time.time() / STEP) * STEP - 600
    om = write_stack(tmp / "stack.om", end, onset=end - 1200)
    with LocalPrometheus(backfill=[om], workdir=tmp / "prom") as prom:
        yield prom, end


def _returns_series(prom: LocalPrometheus) -> Callable[[Shown], bool]:
    client = PrometheusClient(prom.url)
    return lambda s: bool(client.query_range(s[0], s[1], s[2], s[3]))


def test_every_query_shown_returns_series_on_the_server(
    stack: tuple[LocalPrometheus, float], tmp_path: Path
) -> None:
    prom, end = stack
    args = ["diagnose", "-p", prom.url, "--at", iso(end), "--window", "1h",
            "--grafana-url", GRAFANA]  # fmt: skip
    for name in ("r.json", "r.md", "r.html"):
        res = runner.invoke(app, [*args, "--full", "-o", str(tmp_path / name)])
        assert res.exit_code == 1, res.output  # findings
    doc = json.loads((tmp_path / "r.json").read_text())
    page = (tmp_path / "r.html").read_text().replace("&amp;", "&")
    markdown = (tmp_path / "r.md").read_text()
    shown: dict[str, list[Shown]] = {
        "json": list(_json_queries(doc)),
        "html": list(_links(re.findall(r"href='([^']+)'", page))),
        "markdown": [
            *((e, doc["start"], doc["end"], doc["step"]) for e in _fenced(markdown)),
            *_links(re.findall(r"\]\((http[^)]+)\)", markdown)),
        ],
    }
    catalog = load_catalog()
    first = {s: catalog.mappings_for(s)[0].family for s in doc["queries"]}
    # the stack is one where the catalog's first mapping is not the server's
    assert first["access.upstream_latency_p99"] == "envoy"
    assert first["service.e2e_latency_p99"] == "infersight"
    ok = _returns_series(prom)
    for report, queries in shown.items():
        assert len(queries) >= 20, report
        empty = sorted({q[0] for q in queries if not ok(q)})
        assert empty == [], f"{report}: {len(empty)} queries return no series: {empty[:3]}"
    families = {q["family"] for qs in doc["queries"].values() for q in qs}
    assert {"vllm", "ingress_nginx", "redis", "qdrant", "dcgm"} <= families

    # the symptom is the gateway's P99 that doubled, with its figures and where
    line = next(ln for ln in markdown.splitlines() if ln.startswith("Symptom: "))
    assert re.match(
        rf"Symptom: access\.request\\_latency\\_p99 \S+ m?s → \S+ m?s \((\d\.\d+)×\) on {GATEWAY} "
        r"since \d\d:\d\d UTC",
        line,
    ), line
    ratio = float(re.search(r"\((\d\.\d+)×\)", line).group(1))  # type: ignore[union-attr]
    assert 1.6 < ratio < 3.0
    panels = re.findall(r'<g class="panel (\w+)" data-signal="([^"]+)"', page)
    assert panels[0] == ("symptom", "access.request_latency_p99")
    title = re.search(r'class="panel-title"[^>]*>([^<]+)<', page)
    assert title is not None and f"on {GATEWAY}: " in title.group(1) and "→" in title.group(1)


def _fenced(text: str) -> list[str]:
    return re.findall(r"^```promql\n(.*)\n```$", text, re.M)


def test_the_bundle_and_the_capture_record_the_queries_that_ran(
    stack: tuple[LocalPrometheus, float], tmp_path: Path
) -> None:
    prom, end = stack
    out = tmp_path / "pulled.tar.gz"
    res = runner.invoke(
        app, ["pull", "-p", prom.url, "--at", iso(end), "--window", "1h", "-o", str(out)]
    )
    assert res.exit_code == 0, res.output
    b = read_bundle(out)
    record = b.manifest.queries["incident"]
    assert (record.rate_window, record.step) == ("5m", STEP)
    fed = {s: [(q.family, q.expr) for q in qs] for s, qs in record.signals.items()}
    assert set(fed) == set(b.frame.signals)
    assert [f for f, _ in fed["access.request_latency_p99"]] == ["ingress_nginx"]
    # the alternatives this server has: vLLM's older KV-cache name, dcgm without FB_RESERVED
    assert "vllm:gpu_cache_usage_perc" in fed["inference.kv_cache_usage"][0][1]
    assert "FB_RESERVED" not in fed["inference.gpu_mem_used_ratio"][0][1]
    assert "baseline-1h" in b.manifest.queries
    ok = _returns_series(prom)
    assert all(ok((r.expr, r.start, r.end, r.step)) for r in b.runs)

    # diagnosing the bundle quotes the same queries
    doc = json.loads(runner.invoke(app, ["diagnose", str(out), "-f", "json"]).stdout)
    ran = {(r.signal, r.expr) for r in b.runs}
    assert {(q["signal"], q["expr"]) for qs in doc["queries"].values() for q in qs} <= ran

    # capture (and `serve`, which captures) records them in its bundle and its diagnosis
    conn = ConnectionSettings(url=prom.url)
    result = capture(CaptureRequest(out=tmp_path / "cap.tar.gz", connection=conn, at=end,
                                    since_s=3600.0, baselines=(3600.0,)))  # fmt: skip
    cap = read_bundle(result.path)
    assert cap.runs and set(result.diagnosis.queries_run) == set(cap.runs)
    stored = json.loads(cap.read_artifact("diagnosis.json"))
    assert stored["queries_run"] and all(
        q["as_run"] for qs in stored["queries"].values() for q in qs
    )
