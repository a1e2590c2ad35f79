"""The lab's vector search: an HNSW index (hnswlib) in a process of its own, with its own
metrics. The graph, built on 8-bit-rounded vectors, is in RAM; the full-precision vectors are in
a file under `--data-dir`, read through a mapping to rescore the graph's candidates
(`vector_store`). Searches run in a small thread pool (hnswlib releases the GIL); the
server-side search time is `infersight_dependency_duration_seconds{dependency="vector_db"}`.

Fault `out-of-ram`: a thread evicts the vectors' pages from the page cache at a fixed pace, as
reclaim does to an index that no longer fits in RAM; every rescoring read then faults the page
in from disk. `clear` stops it and reads the file back in.

    python -m infersight.lab.live.vector_service --port 8002 --docs 20000 --data-dir DIR
"""

from __future__ import annotations

import asyncio
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
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
from infersight.lab.live.vector_store import DiskVectors, Pressure, StoreCollector

DIM = 64
#: candidates the graph returns per result, rescored on the exact vectors: 64 reads for the
#: API's k=4, about what a disk-based ANN query (DiskANN's beam search) reads
RESCORE = 16
#: how often the fault evicts the vectors' pages
EVICT_EVERY_S = 0.02
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
    def __init__(self, docs: int, data_dir: Path, seed: int = 7) -> None:
        import hnswlib  # type: ignore[import-untyped]

        rng = np.random.default_rng(seed)
        data = rng.standard_normal((docs, DIM)).astype(np.float32)
        data /= np.linalg.norm(data, axis=1, keepdims=True)
        self.store = DiskVectors(data_dir / "vectors.f32", data)
        self.index = hnswlib.Index(space="cosine", dim=DIM)
        self.index.init_index(max_elements=docs, ef_construction=64, M=12)
        self.index.add_items(np.round(data * 127) / 127, np.arange(docs), num_threads=1)
        self.index.set_ef(32)  # hnswlib searches with max(ef, k)
        self.docs = docs
        self.pressure: Pressure | None = None
        self.pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="search")
        self.registry = registry_with_runtime()
        self.m_search = Histogram(
            "infersight_dependency_duration_seconds",
            "Server-side time of one dependency call.",
            ("dependency",),
            buckets=SEC,
            registry=self.registry,
        ).labels("vector_db")
        self.registry.register(StoreCollector(self.store))

    def _search(self, vector: list[float], k: int) -> list[int]:
        q = np.asarray(vector, dtype=np.float32)
        labels, _ = self.index.knn_query(q[None, :], k=min(self.docs, k * RESCORE))
        ids = labels[0].astype(np.int64)
        scores = self.store.rows(ids) @ (q / (float(np.linalg.norm(q)) or 1.0))
        return [int(ids[i]) for i in np.argsort(-scores)[:k]]

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
        if name != "out-of-ram":
            raise ValueError(f"unknown fault {name!r} for the vector service")
        interval = float(params.get("interval_s", EVICT_EVERY_S))
        if not 0.005 <= interval <= 10:
            raise ValueError("interval_s must be 0.005-10")
        if self.pressure is None:
            self.store.evict()
            if self.store.resident_bytes() > self.store.size // 2:
                # tmpfs and the like: the file's pages cannot leave RAM, the fault would be void
                raise ValueError(f"{self.store.path}: its pages stay in RAM when evicted")
            self.pressure = Pressure(self.store, interval)
        return {"active": [name], "interval_s": self.pressure.interval_s}

    def clear(self) -> dict[str, Any]:
        if self.pressure is not None:
            self.pressure.stop()
            self.pressure = None
        self.store.warm()
        return {"active": [], "resident_bytes": self.store.resident_bytes()}


def create_app(docs: int, data_dir: Path) -> FastAPI:
    index = VectorIndex(docs, data_dir)
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
    p.add_argument("--data-dir", type=Path, default=Path("vector-index"))
    args = p.parse_args()
    serve(create_app(args.docs, args.data_dir), args.port)


if __name__ == "__main__":
    main()
