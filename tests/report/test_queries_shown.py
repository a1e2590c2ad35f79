"""Every report quotes the query a finding's series came from, as recorded by the pull: both
families where two fed a signal, over the recorded range and step (issue 39). Without a record
the catalog's mapping is shown and said to be the catalog's."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from html import escape
from urllib.parse import parse_qs, unquote, urlparse

from minischema import validate
from report_samples import END, START, incident, windows

from infersight.diagnose.result import Diagnosis
from infersight.provenance import QueryRun
from infersight.report import diagnosis_schema, render_html, render_json, render_markdown
from infersight.report.links import CATALOG_NOTE, Links

LINKS = Links("http://prom.example:9090", "https://grafana.example", "Mimir")
#: qdrant's search P99 (a regex with `|`, which a Markdown table would have to escape)
VECTOR = (
    "histogram_quantile(0.99, sum by (le, node, hostname, Hostname, instance, pod) "
    '(rate(rest_responses_duration_seconds_bucket{endpoint=~".*/points/(search|query).*"}[2m])))'
)
QUEUE_VLLM = "sum by (node, hostname, Hostname, instance, pod) (vllm:num_requests_waiting)"
QUEUE_TGI = "sum by (node, hostname, Hostname, instance, pod) (tgi_queue_size)"


def _recorded() -> Diagnosis:
    end = END + 7.0  # the query's own end, past the grid's last point
    runs = (
        QueryRun("dependency.vector_query_p99", "qdrant", VECTOR, "2m", START, end, 30.0),
        QueryRun("service.queue_length", "vllm", QUEUE_VLLM, "2m", START, end, 30.0),
        QueryRun("service.queue_length", "tgi", QUEUE_TGI, "2m", START, end, 30.0),
    )
    return replace(incident(), queries_run=runs)


def test_json_quotes_the_recorded_queries_with_their_range_and_step() -> None:
    d = _recorded()
    doc = json.loads(render_json(d, links=LINKS))
    assert validate(doc, diagnosis_schema()) == []
    queue = doc["queries"]["service.queue_length"]
    assert [(q["family"], q["expr"], q["as_run"]) for q in queue] == [
        ("vllm", QUEUE_VLLM, True),
        ("tgi", QUEUE_TGI, True),
    ]
    (vec,) = doc["queries"]["dependency.vector_query_p99"]
    assert (vec["expr"], vec["rate_window"], vec["step"], vec["end"]) == (
        VECTOR,
        "2m",
        30.0,
        END + 7,
    )
    prom = parse_qs(urlparse(vec["links"]["prometheus"]).query)
    assert prom["g0.expr"] == [VECTOR] and prom["g0.step_input"] == ["30"]
    assert prom["g0.range_input"] == [f"{round(END + 7 - START)}s"]
    state = json.loads(parse_qs(urlparse(vec["links"]["grafana"]).query)["left"][0])
    assert state["queries"][0]["expr"] == VECTOR and state["queries"][0]["interval"] == "30s"
    assert state["range"]["to"] == str(int((END + 7) * 1000))
    # a signal the pull did not record: the catalog's, and said so
    (cat,) = doc["queries"]["infra.gpu_temp_c"]
    assert cat["as_run"] is False
    # the record survives the JSON round trip
    assert Diagnosis.from_dict(doc).queries_run == d.queries_run


def test_a_document_of_version_7_reads_with_no_record() -> None:
    doc = json.loads(render_json(_recorded()))
    doc.pop("queries_run")
    doc["schema_version"] = 7
    assert Diagnosis.from_dict(doc).queries_run == ()


def test_html_links_each_family_that_fed_a_signal() -> None:
    d = _recorded()
    page = render_html(d, windows(d), links=LINKS)
    hrefs = [h.replace("&amp;", "&") for h in re.findall(r"href='([^']+)'", page)]
    exprs = {parse_qs(urlparse(h).query)["g0.expr"][0] for h in hrefs if "/graph?" in h}
    assert {QUEUE_VLLM, QUEUE_TGI, VECTOR} <= exprs
    grafana = [
        json.loads(unquote(h.split("left=", 1)[1]))["queries"][0]["expr"]
        for h in hrefs
        if "/explore?" in h
    ]
    assert {QUEUE_VLLM, QUEUE_TGI, VECTOR} <= set(grafana)
    assert ">Prometheus · tgi</a>" in page and ">Prometheus · vllm</a>" in page


def _fenced(text: str) -> list[str]:
    return re.findall(r"^```promql\n(.*)\n```$", text, re.M)


def test_markdown_quotes_each_query_as_written() -> None:
    d = _recorded()
    full = render_markdown(d, full=True, links=LINKS)
    assert {VECTOR, QUEUE_VLLM, QUEUE_TGI} <= set(_fenced(full))
    assert "[Prometheus](http://prom.example:9090/graph?g0.expr=" in full
    # the first screen quotes the queries behind its figures: the roots' and the symptom's
    short = render_markdown(d, links=LINKS)
    assert VECTOR in _fenced(short)


def test_without_a_record_the_catalogs_query_says_so() -> None:
    d = incident()
    assert d.queries_run == ()
    full = render_markdown(d, full=True)
    assert CATALOG_NOTE in " ".join(full.replace("\\", "").split())
    assert escape(CATALOG_NOTE) in render_html(d, windows(d))
    doc = json.loads(render_json(d))
    assert all(q["as_run"] is False for qs in doc["queries"].values() for q in qs)
