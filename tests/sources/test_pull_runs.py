"""The pull records, per signal, the query of each family its series came from, exactly as sent
(issue 39: the reports quoted the catalog's first mapping, which the server did not have)."""

from __future__ import annotations

from infersight.exporters import load_catalog
from infersight.sources.prometheus import PrometheusClient
from infersight.sources.pull import pull
from servers import FakeServer, Reply, Request, matrix, ok

#: Triton on node-1 and dcgm-exporter on node-1 and node-2; dcgm without FB_RESERVED (an older
#: default field list: the mapping's second alternative); Triton's queue metric with no data
NAMES = [
    "nv_inference_request_success",
    "nv_gpu_utilization",
    "nv_inference_pending_request_count",
    "DCGM_FI_DEV_GPU_UTIL",
    "DCGM_FI_DEV_FB_USED",
    "DCGM_FI_DEV_FB_FREE",
]


def _answer(req: Request) -> Reply:
    if req.path.endswith("/values"):
        return ok(NAMES)
    q = req.params["query"]
    pts = [(float(req.params["start"]) + 15 * j, "0.5") for j in range(3)]
    if "nv_inference_pending_request_count" in q:
        return matrix([])
    if "nv_gpu_utilization" in q:
        return matrix([({"instance": "node-1:8002"}, pts)])
    return matrix(
        [
            ({"instance": "node-1:9400", "Hostname": "node-1"}, pts),
            ({"instance": "node-2:9400", "Hostname": "node-2"}, pts),
        ]
    )


def test_each_family_that_fed_a_signal_is_recorded_with_the_query_as_sent() -> None:
    sigs = ["inference.gpu_util", "inference.gpu_mem_used_ratio", "service.queue_length"]
    with FakeServer(_answer) as fake:
        res = pull(PrometheusClient(fake.url, retries=0), load_catalog(), 1000, 1030, 15, sigs)
        sent = {r.params["query"]: r.params for r in fake.requests if "query" in r.params}
    runs = {(r.signal, r.family): r for r in res.runs}
    # two kinds of instance, two families: both queries, the higher-priority family first
    util = [r for r in res.runs if r.signal == "inference.gpu_util"]
    assert [r.family for r in util] == ["triton", "dcgm"]
    # the alternative the server has, not the catalog's first (which needs FB_RESERVED)
    mem = runs["inference.gpu_mem_used_ratio", "dcgm"]
    assert "FB_RESERVED" not in mem.expr and "DCGM_FI_DEV_FB_FREE" in mem.expr
    # a family whose query returned nothing fed nothing: the signal is missing, not recorded
    assert "service.queue_length" in res.missing
    assert not any(r.signal == "service.queue_length" for r in res.runs)
    for r in res.runs:
        params = sent[r.expr]  # the very expression the server received
        assert float(params["start"]) == r.start and float(params["end"]) == r.end
        assert float(params["step"]) == r.step == 15 and r.rate_window == "5m"
    assert res.to_dict()["runs"][0]["expr"] == res.runs[0].expr
