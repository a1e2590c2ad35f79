"""The modelled card under a real engine: dcgm-exporter's view of a GPU whose busy share is
read from the vLLM engine that "runs on it".

Four times a second it reads the engine's `/metrics`; the card counts as busy while the engine
has requests running (`vllm:num_requests_running` > 0), as DCGM's utilisation is the share of
time a kernel ran. An engine that does not answer leaves the card idle. Clock, temperature,
framebuffer and Xid are the card's own (`card.py`), changed by the card faults.

    python -m infersight.lab.live.card_follower --port 9401 --name replica-0 --engine 8101
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
from fastapi import FastAPI, HTTPException
from prometheus_client.parser import text_string_to_metric_families

from infersight.lab.live.card import Card
from infersight.lab.live.service_common import admin_routes, base_args, metrics_route, serve

POLL_S = 0.25
RUNNING = "vllm:num_requests_running"


def running_of(text: str) -> float:
    """Requests running, summed over the engine's samples (0 when it exports none)."""
    total = 0.0
    for fam in text_string_to_metric_families(text):
        if fam.name == RUNNING:
            total += sum(s.value for s in fam.samples)
    return total


class Follower:
    def __init__(self, name: str, engine_port: int) -> None:
        self.card = Card(name)
        self.url = f"http://127.0.0.1:{engine_port}/metrics"
        self.reachable = False

    async def poll(self, http: httpx.AsyncClient) -> bool:
        """Whether the engine had requests running just now."""
        try:
            r = await http.get(self.url)
            self.reachable = r.status_code == 200
            return self.reachable and running_of(r.text) > 0
        except (httpx.HTTPError, ValueError):
            self.reachable = False
            return False

    async def run(self) -> None:
        async with httpx.AsyncClient(timeout=1.0, trust_env=False) as http:
            busy, polls, last = 0, 0, time.monotonic()
            while True:
                busy += await self.poll(http)
                polls += 1
                await asyncio.sleep(POLL_S)
                now = time.monotonic()
                if now - last >= 1.0:
                    self.card.advance(100.0 * busy / max(1, polls), now - last)
                    busy, polls, last = 0, 0, now

    def apply(self, name: str, params: dict[str, Any]) -> dict[str, Any]:
        self.card.apply(name, params)
        return {"card": self.url, "active": sorted(self.card.state.faults)}

    def clear(self) -> dict[str, Any]:
        self.card.clear()
        return {"card": self.url, "active": []}


def create_app(name: str, engine_port: int) -> FastAPI:
    follower = Follower(name, engine_port)

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        follower.card.publish()
        task = asyncio.create_task(follower.run())
        try:
            yield
        finally:
            task.cancel()

    app = FastAPI(lifespan=lifespan)
    metrics_route(app, "/dcgm/metrics", follower.card.registry)
    admin_routes(app, follower.apply, follower.clear)

    async def health() -> dict[str, Any]:
        if follower.card.state.gone:
            raise HTTPException(503, "GPU lost (Xid 79)")
        return {"status": "ok", "modelled_gpu": True, "engine_answers": follower.reachable}

    app.add_api_route("/health", health, methods=["GET"])
    app.state.follower = follower
    return app


def main() -> None:
    p = base_args("infersight live lab: the modelled card under a real engine")
    p.add_argument("--engine", type=int, required=True, help="the engine's port (/metrics)")
    args = p.parse_args()
    serve(create_app(args.name, args.engine), args.port)


if __name__ == "__main__":
    main()
