"""A GPU stand-in: one inference replica whose queueing and batching are real code
(`infersight.serving.AdaptiveBatcher`) and whose GPU arithmetic is modelled.

No GPU is here. Each batch "runs" for the time a step-cost model gives (prefill plus one decode
step per output token, each with a fixed and a per-sequence cost, stretched when the SM clock
drops), spent in `asyncio.sleep`, not on a device. The process exposes what a vLLM server
(`/metrics`) and a dcgm-exporter (`/dcgm/metrics`) would, with their real names and units, so
the catalog reads it as it reads production. The faults change the model's state: a clock drop
(thermal throttling), an Xid 79 with the GPU gone, a VRAM leak; and the batching delay.

    python -m infersight.lab.live.gpu_standin --port 8001 --name replica-0
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from fastapi import FastAPI, HTTPException
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from pydantic import BaseModel

from infersight.lab.live.card import CARD_FAULTS, Card
from infersight.lab.live.service_common import (
    admin_routes,
    base_args,
    metrics_route,
    registry_with_runtime,
    serve,
)
from infersight.serving import (
    AdaptiveBatcher,
    Batcher,
    FixedWindowBatcher,
    Overloaded,
    ServingControls,
    install_serving_admin,
)

MODEL = "lab-llm-7b"
SEC = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)


@dataclass
class StepCost:
    """Seconds one batch takes on the modelled card at the nominal clock."""

    prefill_base: float = 0.008
    prefill_per_seq: float = 0.0015
    decode_base: float = 0.004
    decode_per_seq: float = 0.0004

    def batch_seconds(self, sizes: list[int], clock_ratio: float) -> tuple[float, float]:
        """(prefill, decode) seconds for sequences generating `sizes` tokens each."""
        n = len(sizes)
        prefill = self.prefill_base + self.prefill_per_seq * n
        decode = max(sizes) * (self.decode_base + self.decode_per_seq * n)
        return prefill / clock_ratio, decode / clock_ratio


class GenerateRequest(BaseModel):
    prompt: str
    max_tokens: int = 16


@dataclass
class _Item:
    prompt_tokens: int
    max_tokens: int
    arrival: float


class Replica:
    """The replica: a batcher in front of the modelled card, and its metrics."""

    def __init__(self, name: str, max_batch_size: int = 16) -> None:
        self.name = name
        self.gpu = Card(name)
        self.card = self.gpu.state
        self.cost = StepCost()
        self.max_batch_size = max_batch_size
        self.running = 0
        self.registry = registry_with_runtime()
        self.dcgm_registry = self.gpu.registry
        self._vllm_metrics(self.registry)
        self.batcher: Batcher[_Item, dict[str, Any]] = self._adaptive()
        self._old: list[Batcher[_Item, dict[str, Any]]] = []

    # -- batching: the serving library -----------------------------------------------------
    def _adaptive(self) -> Batcher[_Item, dict[str, Any]]:
        return AdaptiveBatcher(
            self._run_batch,
            max_batch_size=self.max_batch_size,
            max_wait=0.01,
            max_queue=128,
            max_queue_wait=5.0,
            name="llm",
            registry=self.registry,
        )

    def _fixed(self, delay: float) -> Batcher[_Item, dict[str, Any]]:
        return FixedWindowBatcher(
            self._run_batch,
            max_batch_size=self.max_batch_size,
            max_queue_delay=delay,
            max_queue=128,
            max_queue_wait=delay + 5.0,
            name="llm",
            registry=self.registry,
        )

    def _swap_batcher(self, new: Batcher[_Item, dict[str, Any]]) -> None:
        old, self.batcher = self.batcher, new
        self._old.append(old)
        asyncio.get_running_loop().create_task(old.close(drain=True))

    async def _run_batch(self, items: list[_Item]) -> list[dict[str, Any] | Exception]:
        start = time.monotonic()
        for it in items:
            self.m_queue.observe(start - it.arrival)
        if self.card.gone:
            return [RuntimeError("CUDA error: unspecified launch failure (Xid 79)")] * len(items)
        if self.card.out_of_memory:
            self.m_oom.inc()
            return [RuntimeError("CUDA out of memory")] * len(items)
        self.running = len(items)
        self.m_running.set(self.running)
        kv = min(1.0, sum(i.prompt_tokens + i.max_tokens for i in items) / 4096)
        self.m_kv.set(kv)
        clock_ratio = self.gpu.clock_ratio
        prefill, decode = self.cost.batch_seconds([i.max_tokens for i in items], clock_ratio)
        try:
            await asyncio.sleep(prefill)
            first_token = time.monotonic()
            await asyncio.sleep(decode)
        finally:
            end = time.monotonic()
            self.card.busy_s += end - start
            self.running = 0
            self.m_running.set(0)
            self.m_kv.set(0.0)
        out: list[dict[str, Any] | Exception] = []
        for it in items:
            self.m_ttft.observe(first_token - it.arrival)
            if it.max_tokens > 1:
                self.m_itl.observe(decode / max(1, it.max_tokens))
            self.m_inference.observe(end - start)
            self.m_prefill.observe(prefill)
            self.m_decode.observe(decode)
            self.m_prompt_tokens.inc(it.prompt_tokens)
            self.m_prompt_hist.observe(it.prompt_tokens)
            self.m_gen_tokens.inc(it.max_tokens)
            out.append({"tokens": it.max_tokens, "text": f"answer from {self.name}"})
        return out

    async def generate(self, req: GenerateRequest) -> dict[str, Any]:
        arrival = time.monotonic()
        item = _Item(len(req.prompt.split()) + 1, max(1, min(req.max_tokens, 256)), arrival)
        self.m_waiting.set(self.batcher.pending + 1)
        try:
            result = await self.batcher.submit(item)
        except Overloaded:
            self.m_success.labels(model_name=MODEL, finished_reason="abort").inc()
            raise
        except Exception as exc:
            self.m_success.labels(model_name=MODEL, finished_reason="abort").inc()
            self.m_e2e.observe(time.monotonic() - arrival)
            raise HTTPException(500, f"engine error: {exc}") from None
        finally:
            self.m_waiting.set(self.batcher.pending)
        self.m_success.labels(model_name=MODEL, finished_reason="length").inc()
        self.m_e2e.observe(time.monotonic() - arrival)
        return result

    # -- the card's slow state: utilisation, temperature, the leak --------------------------
    async def tick(self) -> None:
        last_busy, last = self.card.busy_s, time.monotonic()
        while True:
            await asyncio.sleep(1.0)
            now = time.monotonic()
            busy = 100.0 * (self.card.busy_s - last_busy) / max(1e-9, now - last)
            self.gpu.advance(busy, now - last)
            last_busy, last = self.card.busy_s, now

    # -- faults -----------------------------------------------------------------------------
    def apply(self, name: str, params: dict[str, Any]) -> dict[str, Any]:
        if name == "batch-delay":
            delay = float(params.get("delay_s", 0.25))
            if not 0 < delay <= 5:
                raise ValueError("delay_s must be in (0, 5]")
            self._swap_batcher(self._fixed(delay))
            self.card.faults[name] = params
        elif name in CARD_FAULTS:
            self.gpu.apply(name, params)
        else:
            raise ValueError(f"unknown fault {name!r} for a GPU stand-in")
        return {"replica": self.name, "active": sorted(self.card.faults)}

    def clear(self) -> dict[str, Any]:
        if "batch-delay" in self.card.faults:
            self._swap_batcher(self._adaptive())
        self.gpu.clear()
        return {"replica": self.name, "active": []}

    # -- metric families --------------------------------------------------------------------
    def _vllm_metrics(self, reg: CollectorRegistry) -> None:
        m = ("model_name",)

        def hist(name: str, doc: str) -> Histogram:
            return Histogram(name, doc, m, buckets=SEC, registry=reg)

        self.m_running = Gauge(
            "vllm:num_requests_running", "Requests running.", m, registry=reg
        ).labels(MODEL)
        self.m_waiting = Gauge(
            "vllm:num_requests_waiting", "Requests waiting.", m, registry=reg
        ).labels(MODEL)
        self.m_kv = Gauge("vllm:kv_cache_usage_perc", "KV-cache usage.", m, registry=reg).labels(
            MODEL
        )
        self.m_success = Counter(
            "vllm:request_success",
            "Finished requests.",
            (*m, "finished_reason"),
            registry=reg,
        )
        # vLLM creates one child per finish reason when it starts, so an abort count of zero
        # is exported, not missing: the error ratio reads 0, not "no data"
        for reason in ("stop", "length", "abort"):
            self.m_success.labels(model_name=MODEL, finished_reason=reason)
        self.m_prompt_tokens = Counter(
            "vllm:prompt_tokens", "Prefill tokens.", m, registry=reg
        ).labels(MODEL)
        self.m_gen_tokens = Counter(
            "vllm:generation_tokens", "Generated tokens.", m, registry=reg
        ).labels(MODEL)
        self.m_prompt_hist = Histogram(
            "vllm:request_prompt_tokens",
            "Prompt tokens per request.",
            m,
            buckets=(8, 16, 32, 64, 128, 256, 512),
            registry=reg,
        ).labels(MODEL)
        self.m_e2e = hist("vllm:e2e_request_latency_seconds", "End-to-end latency.").labels(MODEL)
        self.m_queue = hist("vllm:request_queue_time_seconds", "Time waiting.").labels(MODEL)
        self.m_ttft = hist("vllm:time_to_first_token_seconds", "Time to first token.").labels(MODEL)
        self.m_itl = hist("vllm:inter_token_latency_seconds", "Inter-token latency.").labels(MODEL)
        self.m_inference = hist(
            "vllm:request_inference_time_seconds", "Time running on the card."
        ).labels(MODEL)
        self.m_prefill = hist("vllm:request_prefill_time_seconds", "Prefill time.").labels(MODEL)
        self.m_decode = hist("vllm:request_decode_time_seconds", "Decode time.").labels(MODEL)
        self.m_oom = Counter(
            "infersight_oom", "GPU out-of-memory errors (modelled card).", registry=reg
        )


def create_app(name: str) -> FastAPI:
    replica = Replica(name)

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        ticker = asyncio.create_task(replica.tick())
        replica.gpu.publish()
        try:
            yield
        finally:
            ticker.cancel()
            await replica.batcher.close(drain=False)

    app = FastAPI(lifespan=lifespan)
    metrics_route(app, "/metrics", replica.registry)
    metrics_route(app, "/dcgm/metrics", replica.dcgm_registry)
    admin_routes(app, replica.apply, replica.clear)
    # the runbooks' remedy for a batch window that starves: loopback only
    install_serving_admin(app, ServingControls(batchers=lambda: {"llm": replica.batcher}))

    async def health() -> dict[str, Any]:
        if replica.card.gone:
            raise HTTPException(503, "GPU lost (Xid 79)")
        return {"status": "ok", "modelled_gpu": True}

    async def generate(req: GenerateRequest) -> dict[str, Any]:
        try:
            return await replica.generate(req)
        except Overloaded as exc:
            raise HTTPException(503, f"overloaded: {exc.reason}") from None

    app.add_api_route("/health", health, methods=["GET"])
    app.add_api_route("/generate", generate, methods=["POST"])
    app.state.replica = replica
    return app


def main() -> None:
    args = base_args("infersight live lab: GPU stand-in replica").parse_args()
    serve(create_app(args.name), args.port)


if __name__ == "__main__":
    main()
