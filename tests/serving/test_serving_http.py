"""Overloaded -> 503 + Retry-After, in-process and against the example service under real HTTP."""

from __future__ import annotations

import asyncio
import re
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import uvicorn
from prometheus_client import CollectorRegistry
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from infersight.serving import Overloaded, OverloadedMiddleware, install_overload_handler
from infersight.serving.metrics import ALL_NAMES

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # the examples package lives at the repository root

from examples.fastapi_service.service import Settings, create_app  # noqa: E402


async def test_exception_handler_maps_overloaded_to_503() -> None:
    async def endpoint(request: Request) -> Response:
        raise Overloaded("queue_full", 2.2)

    app = Starlette(routes=[Route("/", endpoint)])
    install_overload_handler(app)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as c:
        r = await c.get("/")
    assert r.status_code == 503
    assert r.headers["Retry-After"] == "3"
    assert r.json() == {"error": "overloaded", "reason": "queue_full", "retry_after": 2.2}


async def test_asgi_middleware_maps_overloaded_to_503() -> None:
    async def raw_app(scope: Scope, receive: Receive, send: Send) -> None:
        raise Overloaded("wait_exceeded", 0.1)

    transport = httpx.ASGITransport(app=OverloadedMiddleware(raw_app))
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as c:
        r = await c.get("/")
    assert r.status_code == 503 and r.headers["Retry-After"] == "1"
    assert r.json()["reason"] == "wait_exceeded"


@pytest.fixture
def live_service() -> Iterator[tuple[str, CollectorRegistry]]:
    """The example app on a free loopback port, with a tiny capacity so that it overloads."""
    registry = CollectorRegistry()
    settings = Settings(
        model_base=0.03,
        max_batch_size=4,
        max_queue=3,
        max_queue_wait=0.2,
        dependency_delay=0.05,
    )
    config = uvicorn.Config(
        create_app(settings, registry), host="127.0.0.1", port=0, log_level="warning"
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "server did not start"
        time.sleep(0.02)
    port = server.servers[0].sockets[0].getsockname()[1]
    yield f"http://127.0.0.1:{port}", registry
    server.should_exit = True
    thread.join(timeout=20)


async def test_example_service_sheds_overload_with_503_and_exposes_native_metrics(
    live_service: tuple[str, CollectorRegistry],
) -> None:
    base, _ = live_service
    limits = httpx.Limits(max_connections=100)
    async with httpx.AsyncClient(base_url=base, limits=limits, timeout=30) as client:
        ok = await client.get("/infer", params={"text": "warm"})
        assert ok.status_code == 200 and ok.json()["prediction"]["input"] == "warm"
        responses = await asyncio.gather(
            *(client.get("/infer", params={"text": f"t{i}", "tenant": "cold"}) for i in range(40))
        )
        metrics = (await client.get("/metrics")).text

    codes = [r.status_code for r in responses]
    assert set(codes) <= {200, 503}
    shed = [r for r in responses if r.status_code == 503]
    served = [r for r in responses if r.status_code == 200]
    assert shed and served, codes
    for r in shed:
        assert int(r.headers["Retry-After"]) >= 1
        assert r.json()["reason"] in {"queue_full", "wait_exceeded"}
    assert {r.json()["prediction"]["input"] for r in served} <= {f"t{i}" for i in range(40)}

    for name in ALL_NAMES:
        assert re.search(rf"^{name}(_bucket|_count|_sum)?{{", metrics, re.M), f"{name} missing"

    def value(sample: str) -> float:
        found = re.search(rf"^{re.escape(sample)} (\S+)$", metrics, re.M)
        assert found, sample
        return float(found.group(1))

    rejections = sum(
        value(f'infersight_rejections_total{{name="model",reason="{r}"}}')
        for r in ("queue_full", "wait_exceeded")
    )
    assert rejections == len(shed)
    assert value('infersight_requests_total{name="infer",outcome="rejected"}') == len(shed)
    assert value('infersight_requests_total{name="infer",outcome="ok"}') == len(served) + 1
    # 41 lookups of two tenants, each loaded once: the misses that came while a load was in
    # flight joined it instead of loading again.
    loads = value('infersight_singleflight_loads_total{name="tenant_config"}')
    joins = value('infersight_singleflight_joins_total{name="tenant_config"}')
    hits = value('infersight_cache_requests_total{name="tenant_config",result="hit"}')
    misses = value('infersight_cache_requests_total{name="tenant_config",result="miss"}')
    assert loads == 2 and misses == loads + joins and hits + misses == 41
    assert value('infersight_workers_limit{name="model"}') == 1
