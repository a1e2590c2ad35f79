"""The example service: a simulated batched model whose batcher also does admission control
(one bounded queue), with a singleflight cache in front of a slow dependency (a per-tenant
config lookup)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass

from fastapi import FastAPI, Request, Response
from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, CollectorRegistry, generate_latest

from infersight.serving import (
    AdaptiveBatcher,
    LoadingCache,
    install_overload_handler,
    serving_metrics,
)


@dataclass(frozen=True)
class Settings:
    """Knobs of the simulation and of the remedies (times in seconds)."""

    model_base: float = 0.005  # service time of one batch: base + per_item * batch size
    model_per_item: float = 0.0005
    max_batch_size: int = 32
    batch_max_wait: float = 0.01  # the adaptive window's cap
    max_queue: int = 256  # requests waiting for a batch, at most
    max_queue_wait: float = 0.25  # from arrival to dispatch, at most (> batch_max_wait)
    dependency_delay: float = 0.05
    cache_ttl: float = 5.0


class SimulatedModel:
    """A batched model whose batch takes base + per_item * len(batch) seconds."""

    def __init__(self, base: float, per_item: float) -> None:
        self.base = base
        self.per_item = per_item
        self.batches = 0

    async def __call__(self, items: list[str]) -> list[dict[str, object]]:
        self.batches += 1
        await asyncio.sleep(self.base + self.per_item * len(items))
        return [
            {"input": text, "label": "positive" if len(text) % 2 else "negative"} for text in items
        ]


class SlowDependency:
    """A backend lookup (e.g. a tenant's model config) that is slow and must not be stampeded."""

    def __init__(self, delay: float) -> None:
        self.delay = delay
        self.loads = 0

    async def load(self, tenant: str) -> dict[str, str]:
        self.loads += 1
        await asyncio.sleep(self.delay)
        return {"tenant": tenant, "model": "sentiment-v1"}


def create_app(
    settings: Settings | None = None, registry: CollectorRegistry | None = None
) -> FastAPI:
    s = settings or Settings()
    reg = REGISTRY if registry is None else registry
    model = SimulatedModel(s.model_base, s.model_per_item)
    dependency = SlowDependency(s.dependency_delay)
    # Admission lives in the batcher: its pending queue is the only queue, refused on arrival
    # (503) when full or when the predicted wait for a batch exceeds max_queue_wait.
    batcher: AdaptiveBatcher[str, dict[str, object]] = AdaptiveBatcher(
        model,
        max_batch_size=s.max_batch_size,
        max_wait=s.batch_max_wait,
        max_queue=s.max_queue,
        max_queue_wait=s.max_queue_wait,
        name="model",
        registry=reg,
    )
    configs: LoadingCache[str, dict[str, str]] = LoadingCache(
        dependency.load, ttl=s.cache_ttl, name="tenant_config", registry=reg
    )
    metrics = serving_metrics(reg)
    outcomes = {
        o: metrics.requests.labels(name="infer", outcome=o) for o in ("ok", "error", "rejected")
    }
    duration = metrics.request_duration.labels(name="infer")

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        yield
        await batcher.close(drain=True)

    app = FastAPI(title="infersight example inference service", lifespan=lifespan)
    app.state.model = model
    app.state.dependency = dependency
    install_overload_handler(app)

    @app.middleware("http")
    async def record(
        request: Request, call_next: Callable[[Request], Awaitable[Response]]
    ) -> Response:
        if request.url.path != "/infer":
            return await call_next(request)
        start = time.perf_counter()
        outcome = "error"
        try:
            response = await call_next(request)
            status = response.status_code
            outcome = "rejected" if status == 503 else "ok" if status < 400 else "error"
            return response
        finally:
            duration.observe(time.perf_counter() - start)
            outcomes[outcome].inc()

    @app.get("/infer")
    async def infer(text: str = "hello", tenant: str = "acme") -> dict[str, object]:
        config = await configs.get(tenant)
        prediction = await batcher.submit(text)  # Overloaded -> 503 + Retry-After
        return {"config": config, "prediction": prediction}

    @app.get("/metrics")
    async def prometheus_metrics() -> Response:
        return Response(generate_latest(reg), media_type=CONTENT_TYPE_LATEST)

    return app
