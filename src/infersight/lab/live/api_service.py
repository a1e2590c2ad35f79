"""The lab's inference API (RAG style), on the serving library:

query ─► admission (the worker pool: N slots, bounded queue, 503 when full)
      ─► embed (AdaptiveBatcher over a CPU embedding)
      ─► retrieve: Redis, with singleflight per key; on a miss the vector service, then SET
      ─► generate: the model pool through the gateway (HAProxy balances the replicas)

python -m infersight.lab.live.api_service --port 8000 --redis 6379 --vector 8002 --llm 8003
"""

from __future__ import annotations

import asyncio
import collections
import dataclasses
import gc
import hashlib
import itertools
import json
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
from fastapi import FastAPI, HTTPException, Query, Request
from prometheus_client import Counter, Gauge, Histogram
from redis.exceptions import RedisError

from infersight.lab.live.llm_client import KINDS, LlmClient, PoolError
from infersight.lab.live.service_common import (
    admin_routes,
    base_args,
    metrics_route,
    registry_with_runtime,
    serve,
)
from infersight.lab.live.vector_service import embed
from infersight.serving import (
    AdaptiveBatcher,
    AdmissionController,
    Overloaded,
    ServingControls,
    SingleFlight,
    install_overload_handler,
    install_serving_admin,
    serving_metrics,
)

CACHE_TTL_S = 60  # short enough that the hit ratio is steady after a minute
#: characters of each retrieved passage the prompt quotes (about 19 tokens of the lab model's)
PASSAGE_CHARS = 40
#: `engine-kv-pressure`: a release that quotes three times as much of each passage and lets
#: answers run to 256 tokens: ~600-token prompts growing to ~850, 7 KV blocks a request where
#: the lab's took 4 (two of them the shared template)
LONG_PASSAGE_CHARS = 120
LONG_ANSWER_TOKENS = 256
SEC = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)


class Api:
    def __init__(self, redis_port: int, vector_port: int, workers: int, llm: LlmClient) -> None:
        import redis.asyncio as aioredis

        self.registry = registry_with_runtime()
        self.metrics = serving_metrics(self.registry)
        self.redis = aioredis.Redis(host="127.0.0.1", port=redis_port, socket_timeout=2.0)
        self.http = httpx.AsyncClient(timeout=10.0, trust_env=False)
        self.vector_url = f"http://127.0.0.1:{vector_port}/search"
        self.llm = llm
        self.default_workers = workers
        self.admission = self._pool(workers)
        self.embedder: AdaptiveBatcher[str, list[float]] = AdaptiveBatcher(
            self._embed_batch,
            max_batch_size=32,
            max_wait=0.005,
            name="embed",
            registry=self.registry,
        )
        self.flight: SingleFlight[str, dict[str, Any]] = SingleFlight(
            name="rag_cache", registry=self.registry
        )
        self.m_dep = Histogram(
            "lab_api_dependency_seconds",
            "Client-side time of the API's calls to its dependencies.",
            ("dependency",),
            buckets=SEC,
            registry=self.registry,
        )
        self.m_cache_errors = Counter(
            "lab_api_cache_errors",
            "Redis calls that failed (the request goes on without the cache).",
            registry=self.registry,
        )
        self.m_gc_pause = Counter(
            "infersight_gc_pause_seconds",
            "Wall time spent in garbage collections (all generations), from gc.callbacks.",
            registry=self.registry,
        )
        self._gc_started = 0.0
        gc.callbacks.append(self._on_gc)
        # feature flags a degradation turns off (seed §6.2): without retrieval the answer
        # comes from the model alone, no vector search
        self.features = {"retrieval": True}
        self.m_feature = Gauge(
            "infersight_feature_enabled",
            "1 while a non-core feature is on, 0 while it is switched off (degraded).",
            ("feature",),
            registry=self.registry,
        )
        for feature in self.features:
            self.m_feature.labels(feature).set(1)
        self._heap: list[Any] = []  # the GC-pressure fault's live objects
        self._churn: asyncio.Task[None] | None = None
        self.faults: dict[str, dict[str, Any]] = {}
        self.passage_chars = PASSAGE_CHARS
        self.answer_floor = 0  # answers at least this long, whatever the caller asked

    def _pool(self, workers: int) -> AdmissionController:
        return AdmissionController(
            workers, max_queue=64, max_wait=2.0, name="api_workers", registry=self.registry
        )

    async def _embed_batch(self, texts: list[str]) -> list[list[float] | Exception]:
        return [embed(t).tolist() for t in texts]

    async def _cached_answer(self, key: str, q: str, max_tokens: int) -> dict[str, Any]:
        """The answer from Redis, or made (retrieve, generate) and stored there."""
        start = time.perf_counter()
        try:
            raw = await self.redis.get(key)
        except RedisError:  # a cache that fails is a miss, not a failed request
            self.m_cache_errors.inc()
            raw = None
        self.m_dep.labels("redis").observe(time.perf_counter() - start)
        if raw is not None:
            self.metrics.cache_requests.labels(name="rag_cache", result="hit").inc()
            cached: dict[str, Any] = json.loads(raw)
            return cached
        self.metrics.cache_requests.labels(name="rag_cache", result="miss").inc()
        docs: list[str] = []
        if self.features["retrieval"]:
            vector = await self.embedder.submit(q)
            start = time.perf_counter()
            r = await self.http.post(self.vector_url, json={"vector": vector, "k": 4})
            self.m_dep.labels("vector_db").observe(time.perf_counter() - start)
            r.raise_for_status()
            docs = r.json()["docs"]
        prompt = q + " " + " ".join(d[: self.passage_chars] for d in docs)
        start = time.perf_counter()
        try:
            text = await self.llm.generate(self.http, prompt, max(max_tokens, self.answer_floor))
        except PoolError as exc:
            raise HTTPException(502, str(exc)) from None
        finally:
            self.m_dep.labels("llm").observe(time.perf_counter() - start)
        # the passages travel with the answer, so a cached answer weighs what a real one does
        answer = {"answer": text, "passages": docs}
        try:
            await self.redis.set(key, json.dumps(answer), ex=CACHE_TTL_S)
        except RedisError:  # e.g. OOM with maxmemory under the server's own overhead
            self.m_cache_errors.inc()
        return answer

    async def answer(self, q: str, max_tokens: int) -> dict[str, Any]:
        start = time.perf_counter()
        outcome = "error"
        try:
            async with self.admission.admit():
                key = f"rag:{max_tokens}:" + hashlib.sha1(q.encode()).hexdigest()
                # one load per key at a time: concurrent misses of a hot question join it
                found = await self.flight.do(key, lambda: self._cached_answer(key, q, max_tokens))
                outcome = "ok"
                return {"answer": found["answer"], "passages": len(found["passages"])}
        except Overloaded:
            outcome = "rejected"
            raise
        except httpx.HTTPError as exc:
            raise HTTPException(502, f"dependency failed: {type(exc).__name__}") from None
        finally:
            self.metrics.requests.labels(name="api", outcome=outcome).inc()
            self.metrics.request_duration.labels(name="api").observe(time.perf_counter() - start)

    def set_feature(self, name: str, enabled: Any) -> dict[str, bool]:
        if name not in self.features:
            raise ValueError(f"no feature {name!r}; there are: {', '.join(self.features)}")
        if not isinstance(enabled, bool):
            raise ValueError('give {"enabled": true} or {"enabled": false}')
        self.features[name] = enabled
        self.m_feature.labels(name).set(1 if enabled else 0)
        return dict(self.features)

    def _on_gc(self, phase: str, _info: dict[str, int]) -> None:
        if phase == "start":
            self._gc_started = time.perf_counter()
        elif self._gc_started:
            self.m_gc_pause.inc(time.perf_counter() - self._gc_started)

    async def _make_garbage(self) -> None:
        """Object churn that outlives the young generations (a ring of recent batches, as a
        cache that turns over would), against a large live heap: full collections come every
        second or so, and each walks the whole heap."""
        recent: collections.deque[list[list[Any]]] = collections.deque(maxlen=50)
        while True:
            junk: list[list[Any]] = [[i, str(i)] for i in range(5_000)]
            for a, b in itertools.pairwise(junk):
                a.append(b)  # cycles: only the collector frees them
            recent.append(junk)
            await asyncio.sleep(0.01)

    def apply(self, name: str, params: dict[str, Any]) -> dict[str, Any]:
        if name == "api-gc-pressure":
            objects = int(params.get("objects", 1_500_000))
            if not 1 <= objects <= 5_000_000:
                raise ValueError("objects must be 1-5000000")
            self._heap = [[i] for i in range(objects)]
            self._churn = asyncio.get_running_loop().create_task(self._make_garbage())
        elif name == "engine-template-change":
            # a release that puts each request's own id before the instructions: no two
            # prompts share a first block any more, so the engines' prefix caches miss
            self.llm = dataclasses.replace(self.llm, per_request_head=True)
        elif name == "engine-kv-pressure":
            self.passage_chars = LONG_PASSAGE_CHARS
            self.answer_floor = LONG_ANSWER_TOKENS
        elif name == "api-pool-shrink":
            workers = int(params.get("workers", 1))
            if not 1 <= workers <= 256:
                raise ValueError("workers must be 1-256")
            # The running holders finish in the old pool; new requests queue in the new one.
            self.admission = self._pool(workers)
        else:
            raise ValueError(f"unknown fault {name!r} for the API")
        self.faults[name] = params
        return {"active": sorted(self.faults)}

    def clear(self) -> dict[str, Any]:
        if self._churn is not None:
            self._churn.cancel()
            self._churn = None
        self._heap = []
        if "api-pool-shrink" in self.faults:
            self.admission = self._pool(self.default_workers)
        self.llm = dataclasses.replace(self.llm, per_request_head=False)
        self.passage_chars, self.answer_floor = PASSAGE_CHARS, 0
        self.faults.clear()
        return {"active": []}

    async def close(self) -> None:
        await self.embedder.close(drain=False)
        await self.http.aclose()
        await self.redis.aclose()


def create_app(redis_port: int, vector_port: int, llm: LlmClient, workers: int = 8) -> FastAPI:
    holder: dict[str, Api] = {}

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        holder["api"] = Api(redis_port, vector_port, workers, llm)
        metrics_route(app, "/metrics", holder["api"].registry)
        admin_routes(app, holder["api"].apply, holder["api"].clear)
        api = holder["api"]
        # the runbooks' remedy: shorter batching window, tighter admission (loopback only)
        install_serving_admin(
            app,
            ServingControls(
                batchers=lambda: {"embed": api.embedder},
                admissions=lambda: {"api_workers": api.admission},
            ),
        )
        try:
            yield
        finally:
            await holder["api"].close()

    app = FastAPI(lifespan=lifespan)
    install_overload_handler(app)

    async def health() -> dict[str, Any]:
        return {"status": "ok"}

    async def answer(
        q: str = Query(..., min_length=1, max_length=500),
        max_tokens: int = Query(16, ge=1, le=256),
    ) -> dict[str, Any]:
        return await holder["api"].answer(q, max_tokens)

    async def flags(request: Request) -> dict[str, bool]:
        if (request.client.host if request.client else "") not in ("127.0.0.1", "::1"):
            raise HTTPException(403, "admin routes answer loopback only")
        return dict(holder["api"].features)

    async def set_flag(name: str, request: Request) -> dict[str, bool]:
        if (request.client.host if request.client else "") not in ("127.0.0.1", "::1"):
            raise HTTPException(403, "admin routes answer loopback only")
        try:
            body = await request.json()
            return holder["api"].set_feature(name, body.get("enabled"))
        except (ValueError, AttributeError) as exc:
            raise HTTPException(400, str(exc)) from None

    app.add_api_route("/health", health, methods=["GET"])
    app.add_api_route("/admin/flags", flags, methods=["GET"])
    app.add_api_route("/admin/flags/{name}", set_flag, methods=["PUT"])
    app.add_api_route("/v1/answer", answer, methods=["GET"])
    return app


def main() -> None:
    p = base_args("infersight live lab: inference API")
    p.add_argument("--redis", type=int, required=True)
    p.add_argument("--vector", type=int, required=True)
    p.add_argument("--llm", type=int, required=True, help="the model pool's port (the gateway)")
    p.add_argument("--llm-api", choices=KINDS, default="standin", help="how the pool is asked")
    p.add_argument("--llm-model", default="", help="the model a real engine serves")
    p.add_argument("--workers", type=int, default=8)
    args = p.parse_args()
    llm = LlmClient(args.llm_api, f"http://127.0.0.1:{args.llm}", args.llm_model)
    serve(create_app(args.redis, args.vector, llm, args.workers), args.port)


if __name__ == "__main__":
    main()
