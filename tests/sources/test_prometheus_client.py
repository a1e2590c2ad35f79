"""PrometheusClient against a scripted fake server: retries, errors, auth, chunking, bounds."""

from __future__ import annotations

import asyncio
import base64
import math
import threading
import time

import numpy as np
import pytest

from infersight.lab.live.servers import free_port
from infersight.sources.errors import (
    AuthError,
    BadQuery,
    MalformedResponse,
    QueryTimeout,
    ServerError,
    ServerUnreachable,
)
from infersight.sources.prometheus import PrometheusClient
from infersight.sources.promseries import Series, parse_result, stitch
from servers import FakeServer, Reply, Request, matrix, ok

FAST = {"retries": 2, "backoff": 0.01, "timeout": 5.0}


def _series_reply(req: Request) -> Reply:
    """A query_range answer: value = ts / 10 at every grid point of the request."""
    start, end, step = (float(req.params[k]) for k in ("start", "end", "step"))
    n = math.floor((end - start) / step + 1e-9) + 1
    pts = [(start + i * step, repr((start + i * step) / 10)) for i in range(n)]
    return matrix([({"instance": "a:1"}, pts), ({"instance": "b:1"}, pts)])


def test_connection_refused_is_unreachable_with_hint() -> None:
    port = free_port()
    client = PrometheusClient(f"http://127.0.0.1:{port}", **FAST)  # type: ignore[arg-type]
    with pytest.raises(ServerUnreachable) as exc:
        client.query("up", 0)
    msg = str(exc.value)
    assert f"127.0.0.1:{port}" in msg and "is the server running" in msg
    assert "after 3 tries" in msg and "\n" not in msg
    assert client.requests == 3


def test_timeout_is_reported_and_not_retried() -> None:
    gate = threading.Event()

    def slow(req: Request) -> Reply:
        gate.wait(5)
        return ok({"resultType": "vector", "result": []})

    with FakeServer(slow) as fake:
        client = PrometheusClient(fake.url, timeout=0.2, retries=1, backoff=0.01)
        with pytest.raises(QueryTimeout) as exc:
            client.query("up", 0)
        gate.set()
    assert "not retried" in str(exc.value) and "--timeout" in str(exc.value)
    assert len(fake.requests) == 1


def test_500_then_200_is_retried() -> None:
    calls: list[int] = []

    def flaky(req: Request) -> Reply:
        calls.append(1)
        if len(calls) == 1:
            return 500, "internal error"
        return ok({"resultType": "vector", "result": [{"metric": {}, "value": [1, "2"]}]})

    with FakeServer(flaky) as fake:
        client = PrometheusClient(fake.url, **FAST)  # type: ignore[arg-type]
        [s] = client.query("up", 1)
    assert s.values.tolist() == [2.0]
    assert len(fake.requests) == 2 and client.requests == 2


@pytest.mark.parametrize("status", [429, 502, 503])
def test_transient_status_exhausts_retries(status: int) -> None:
    with FakeServer(lambda r: (status, {"status": "error", "error": "busy"})) as fake:
        client = PrometheusClient(fake.url, **FAST)  # type: ignore[arg-type]
        with pytest.raises(ServerError) as exc:
            client.query("up", 1)
    assert len(fake.requests) == 3
    assert f"HTTP {status}" in str(exc.value) and "busy" in str(exc.value)


def test_an_endpoint_failing_every_request_is_not_retried_until_it_answers() -> None:
    """After `broken_after` requests there failed with 5xx after every retry, the next get one try
    each; a success brings the retries back, and another endpoint keeps its own count."""
    healthy = threading.Event()

    def reply(req: Request) -> Reply:
        if req.path.endswith("/label/__name__/values"):
            return ok(["up"])
        if healthy.is_set():
            return ok({"resultType": "vector", "result": []})
        return 500, {"status": "error", "errorType": "internal", "error": "boom"}

    with FakeServer(reply) as fake:
        client = PrometheusClient(fake.url, broken_after=2, **FAST)  # type: ignore[arg-type]
        for _ in range(2):
            with pytest.raises(ServerError):
                client.query("up", 1)
        assert client.requests == 6
        assert client.metric_names() == ["up"]  # another endpoint: its success resets nothing here
        with pytest.raises(ServerError) as exc:
            client.query("up", 1)
        assert client.requests == 8 and "not retried, the last 2 requests there failed" in str(
            exc.value
        )
        healthy.set()
        assert client.query("up", 1) == []
        healthy.clear()
        with pytest.raises(ServerError):
            client.query("up", 1)
    assert client.requests == 9 + 3


def test_bad_promql_is_not_retried_and_quotes_the_server() -> None:
    body = {
        "status": "error",
        "errorType": "bad_data",
        "error": '1:5: parse error: unexpected "}"',
    }
    with FakeServer(lambda r: (400, body)) as fake:
        client = PrometheusClient(fake.url, **FAST)  # type: ignore[arg-type]
        with pytest.raises(BadQuery) as exc:
            client.query_range("sum(}", 0, 60, 15)
    assert len(fake.requests) == 1
    assert 'unexpected "}"' in str(exc.value) and "sum(}" in str(exc.value)
    assert exc.value.expr == "sum(}"


@pytest.mark.parametrize("status", [401, 403])
def test_auth_failure_names_the_flags(status: int) -> None:
    with FakeServer(lambda r: (status, "denied")) as fake:
        client = PrometheusClient(fake.url, **FAST)  # type: ignore[arg-type]
        with pytest.raises(AuthError) as exc:
            client.metric_names()
    assert len(fake.requests) == 1
    assert "--bearer-token(-file), --basic-auth" in str(exc.value)
    assert "denied" in str(exc.value) and "--tenant" in str(exc.value)


def test_other_4xx_not_retried() -> None:
    with FakeServer(lambda r: (404, "404 page not found")) as fake:
        client = PrometheusClient(fake.url, **FAST)  # type: ignore[arg-type]
        with pytest.raises(ServerError) as exc:
            client.buildinfo()
    assert len(fake.requests) == 1 and "HTTP 404" in str(exc.value)
    assert "path prefix" in str(exc.value)  # the usual cause: Mimir's /prometheus, a proxy


@pytest.mark.parametrize("suffix", ["/api/v1", "/api/v1/", "/prometheus/api/v1"])
def test_a_url_ending_in_the_api_path_is_accepted(suffix: str) -> None:
    # users copy the URL of an API call; `/api/v1/api/v1/query` would be a 404
    with FakeServer(lambda r: ok({"resultType": "vector", "result": []})) as fake:
        client = PrometheusClient(fake.url + suffix, **FAST)  # type: ignore[arg-type]
        assert client.query("up", 1) == []
        assert client.url == fake.url + suffix.removesuffix("/").removesuffix("/api/v1")
    assert (
        fake.requests[0].path == suffix.removesuffix("/").removesuffix("/api/v1") + "/api/v1/query"
    )


@pytest.mark.parametrize(
    "body",
    ["<html>not json</html>", {"data": []}, {"status": "success"}],
    ids=["not-json", "no-status", "no-data"],
)
def test_malformed_response(body: str | dict[str, object]) -> None:
    with FakeServer(lambda r: (200, body)) as fake:
        client = PrometheusClient(fake.url, **FAST)  # type: ignore[arg-type]
        with pytest.raises(MalformedResponse) as exc:
            client.query("up", 1)
    assert len(fake.requests) == 1 and "\n" not in str(exc.value)


def test_unexpected_result_shape_is_malformed() -> None:
    with pytest.raises(MalformedResponse):
        parse_result({"resultType": "matrix", "result": [{"values": []}]})
    with pytest.raises(MalformedResponse):
        parse_result({"resultType": "matrix", "result": [{"metric": {}, "values": [["x", "1"]]}]})
    with pytest.raises(MalformedResponse):
        parse_result({"result": []})


def test_status_error_with_200() -> None:
    body = {
        "status": "error",
        "errorType": "execution",
        "error": "query processing would load too many samples",
    }
    with FakeServer(lambda r: (200, body)) as fake:
        client = PrometheusClient(fake.url, **FAST)  # type: ignore[arg-type]
        with pytest.raises(ServerError) as exc:
            client.query("up", 1)
    assert "too many samples" in str(exc.value) and "execution" in str(exc.value)


def test_special_floats_parse() -> None:
    reply = matrix([({"a": "1"}, [(1, "NaN"), (2, "+Inf"), (3, "-Inf"), (4, "1.5e3")])])
    with FakeServer(lambda r: reply) as fake:
        [s] = PrometheusClient(fake.url).query_range("x", 1, 4, 1)
    assert math.isnan(s.values[0]) and s.values[1] == math.inf and s.values[2] == -math.inf
    assert s.values[3] == 1500.0 and s.ts.tolist() == [1, 2, 3, 4] and s.labels == {"a": "1"}


def test_scalar_result() -> None:
    [s] = parse_result({"resultType": "scalar", "result": [5, "7"]})
    assert s.labels == {} and s.values.tolist() == [7.0]


def test_bearer_header_sent() -> None:
    with FakeServer(lambda r: ok(["up"])) as fake:
        assert PrometheusClient(fake.url, bearer_token="s3cret").metric_names() == ["up"]
    assert fake.requests[0].headers["Authorization"] == "Bearer s3cret"
    assert fake.requests[0].path == "/api/v1/label/__name__/values"


def test_basic_auth_header_sent_and_time_range_passed() -> None:
    with FakeServer(lambda r: ok(["b", "a"])) as fake:
        client = PrometheusClient(fake.url + "/", basic_auth=("ann", "pw"))
        assert client.metric_names(start=100, end=200.5) == ["a", "b"]
    expected = "Basic " + base64.b64encode(b"ann:pw").decode()
    assert fake.requests[0].headers["Authorization"] == expected
    assert fake.requests[0].params == {"start": "100", "end": "200.5"}


def test_chunked_range_equals_unsplit() -> None:
    with FakeServer(_series_reply) as fake:
        whole = PrometheusClient(fake.url).query_range("x", 1000, 1000 + 94 * 15, 15)
        assert len(fake.requests) == 1
        small = PrometheusClient(fake.url, max_points_per_query=10)
        parts = small.query_range("x", 1000, 1000 + 94 * 15, 15)
    assert small.requests == 10  # 95 points, 10 per request
    chunk_reqs = fake.requests[1:]
    sizes = [(float(r.params["end"]) - float(r.params["start"])) / 15 + 1 for r in chunk_reqs]
    assert max(sizes) <= 10 and sum(sizes) == 95  # no grid point asked twice
    assert len(parts) == len(whole) == 2
    for a, b in zip(
        sorted(whole, key=lambda s: s.labels["instance"]),
        sorted(parts, key=lambda s: s.labels["instance"]),
        strict=True,
    ):
        assert a.labels == b.labels
        np.testing.assert_array_equal(a.ts, b.ts)
        np.testing.assert_array_equal(a.values, b.values)


def test_stitch_drops_a_repeated_boundary_point() -> None:
    a = Series({"i": "1"}, np.array([0.0, 15.0]), np.array([1.0, 2.0]))
    b = Series({"i": "1"}, np.array([15.0, 30.0]), np.array([2.0, 3.0]))
    c = Series({"i": "2"}, np.array([30.0]), np.array([9.0]))
    out = {s.labels["i"]: s for s in stitch([[a], [b, c]])}
    assert out["1"].ts.tolist() == [0, 15, 30] and out["1"].values.tolist() == [1, 2, 3]
    assert out["2"].ts.tolist() == [30]


def test_concurrency_is_bounded() -> None:
    def slowish(req: Request) -> Reply:
        time.sleep(0.05)
        return _series_reply(req)

    async def many(client: PrometheusClient) -> list[list[Series]]:
        async with client:
            return await asyncio.gather(
                *(client.aquery_range(f"x{i}", 0, 150, 15) for i in range(20))
            )

    with FakeServer(slowish) as fake:
        client = PrometheusClient(fake.url, max_concurrency=3)
        results = asyncio.run(many(client))
    assert len(results) == 20 and len(fake.requests) == 20
    assert fake.max_in_flight <= 3


def test_bad_range_rejected() -> None:
    with pytest.raises(ValueError):
        PrometheusClient("http://127.0.0.1:1").query_range("x", 10, 0, 15)
