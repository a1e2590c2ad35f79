"""The lab's vector search: an HNSW index (hnswlib) in a process of its own, with its own
metrics. Searches run in a small thread pool (hnswlib releases the GIL); the server-side search
time is `infersight_dependency_duration_seconds{dependency="vector_db"}`.

    python -m infersight.lab.live.vector_service --port 8002 --docs 20000
"""

from __future__ import annotations

import asyncio
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
from fastapi import FastAPI, HTTPException
from prometheus_client import Histogram
from pydantic import BaseModel

from infersight.lab.live.service_common import (
    admin_routes,
    base_args,
    metrics_route,
    registry_with_runtime,
    serve,
)

DIM = 64
SEC = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)


def embed(text: str, dim: int = DIM) -> np.ndarray:
    """A deterministic stand-in embedding: the same text, the same unit vector."""
    seed = int.from_bytes(text.encode()[:64].ljust(8, b"\0")[:8], "little") ^ len(text)
    v = np.random.default_rng(seed % (2**63)).standard_normal(dim).astype(np.float32)
    n = float(np.linalg.norm(v))
    return v / n if n else v


class SearchRequest(BaseModel):
    vector: list[float]
    k: int = 4


class VectorIndex:
    def __init__(self, docs: int, seed: int = 7) -> None:
        import hnswlib  # type: ignore[import-untyped]

        rng = np.random.default_rng(seed)
        data = rng.standard_normal((docs, DIM)).astype(np.float32)
        data /= np.linalg.norm(data, axis=1, keepdims=True)
        self.index = hnswlib.Index(space="cosine", dim=DIM)
        self.index.init_index(max_elements=docs, ef_construction=64, M=12)
        self.index.add_items(data, np.arange(docs), num_threads=1)
        self.index.set_ef(32)
        self.docs = docs
        self.pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="search")
        self.registry = registry_with_runtime()
        self.m_search = Histogram(
            "infersight_dependency_duration_seconds",
            "Server-side time of one dependency call.",
            ("dependency",),
            buckets=SEC,
            registry=self.registry,
        ).labels("vector_db")

    def _search(self, vector: list[float], k: int) -> list[int]:
        labels, _ = self.index.knn_query(np.asarray([vector], dtype=np.float32), k=k)
        return [int(x) for x in labels[0]]

    async def search(self, req: SearchRequest) -> dict[str, Any]:
        if len(req.vector) != DIM or not 1 <= req.k <= 32:
            raise HTTPException(400, f"vector must have {DIM} floats and k 1-32")
        start = time.perf_counter()
        ids = await asyncio.get_running_loop().run_in_executor(
            self.pool, self._search, req.vector, req.k
        )
        self.m_search.observe(time.perf_counter() - start)
        return {"ids": ids, "docs": [f"passage {i}: " + "lorem ipsum " * 40 for i in ids]}

    def apply(self, name: str, params: dict[str, Any]) -> dict[str, Any]:
        raise ValueError(f"unknown fault {name!r} for the vector service")

    def clear(self) -> dict[str, Any]:
        return {"active": []}


def create_app(docs: int) -> FastAPI:
    index = VectorIndex(docs)
    app = FastAPI()
    metrics_route(app, "/metrics", index.registry)
    admin_routes(app, index.apply, index.clear)

    async def health() -> dict[str, Any]:
        return {"status": "ok", "docs": index.docs}

    app.add_api_route("/health", health, methods=["GET"])
    app.add_api_route("/search", index.search, methods=["POST"])
    return app


def main() -> None:
    p = base_args("infersight live lab: vector search")
    p.add_argument("--docs", type=int, default=20000)
    args = p.parse_args()
    serve(create_app(args.docs), args.port)


if __name__ == "__main__":
    main()
