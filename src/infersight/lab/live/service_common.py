"""What every Python part of the live lab shares: a loopback-only uvicorn server, a registry
with the process collectors (so `python_runtime` sees restarts and memory), and the admin
routes through which `lab fault` changes a running part."""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from typing import Any

from fastapi import FastAPI, HTTPException, Request, Response
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    GCCollector,
    PlatformCollector,
    ProcessCollector,
    generate_latest,
)

FaultFn = Callable[[str, dict[str, Any]], dict[str, Any]]


def registry_with_runtime() -> CollectorRegistry:
    reg = CollectorRegistry()
    ProcessCollector(registry=reg)
    PlatformCollector(registry=reg)
    GCCollector(registry=reg)
    return reg


def metrics_route(app: FastAPI, path: str, registry: CollectorRegistry) -> None:
    async def metrics() -> Response:
        return Response(generate_latest(registry), media_type=CONTENT_TYPE_LATEST)

    app.add_api_route(path, metrics, methods=["GET"])


def admin_routes(app: FastAPI, apply: FaultFn, clear: Callable[[], dict[str, Any]]) -> None:
    """POST /admin/fault {"name", "params"} and POST /admin/clear, answered from loopback only."""

    def _local(request: Request) -> None:
        host = request.client.host if request.client else ""
        if host not in ("127.0.0.1", "::1"):
            raise HTTPException(403, "admin routes answer loopback only")

    async def fault(request: Request) -> dict[str, Any]:
        _local(request)
        body = await request.json()
        name = body.get("name")
        if not isinstance(name, str):
            raise HTTPException(400, "body needs a fault name")
        params = body.get("params") or {}
        try:
            return apply(name, dict(params))
        except ValueError as exc:
            raise HTTPException(400, str(exc)) from None

    async def clear_all(request: Request) -> dict[str, Any]:
        _local(request)
        return clear()

    app.add_api_route("/admin/fault", fault, methods=["POST"])
    app.add_api_route("/admin/clear", clear_all, methods=["POST"])


def base_args(description: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--name", default=os.environ.get("INFERSIGHT_LAB_PART", "part"))
    return p


def serve(app: FastAPI, port: int) -> None:
    import uvicorn

    uvicorn.run(
        app, host="127.0.0.1", port=port, log_level="warning", access_log=False, lifespan="on"
    )
