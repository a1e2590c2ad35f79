"""A device stand-in served by uvicorn for sweep tests: an OpenAI-style `/v1/embeddings` whose
batches run one at a time on one "device" and a `GET /infer` whose requests share `slots`.

A batch of n items takes `base × max(1, n / knee)` seconds: below the knee a larger batch costs
the same time (throughput grows with n), past it time grows with n (throughput is flat), so
the batch curve's knee sits at `knee` by construction, as long as `base` dwarfs the fixed cost
of one request's HTTP and JSON (5-20 ms on a busy 2-core machine): that cost is amortised over
the items, so a small `base` makes throughput keep rising past the knee. `/infer` holds one of
`slots` for `base` seconds: throughput grows with concurrency up to `slots`, then stays flat."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import uvicorn
from fastapi import FastAPI


def create_app(base: float, knee: int, slots: int) -> FastAPI:
    app = FastAPI()
    device = asyncio.Lock()
    pool = asyncio.Semaphore(slots)

    @app.post("/v1/embeddings")
    async def embeddings(body: dict[str, Any]) -> dict[str, Any]:
        items = body.get("input") or []
        n = len(items) if isinstance(items, list) else 1
        async with device:
            await asyncio.sleep(base * max(1.0, n / knee))
        return {"object": "list", "data": [{"index": i, "embedding": [0.0]} for i in range(n)]}

    @app.get("/infer")
    async def infer(text: str = "x") -> dict[str, Any]:
        async with pool:
            await asyncio.sleep(base)
        return {"text": text}

    return app


@contextmanager
def serve(app: Any) -> Iterator[str]:
    """`app` on a free loopback port in a thread; yields its base URL, stops it after."""
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "server did not start"
        time.sleep(0.02)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=20)
