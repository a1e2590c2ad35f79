"""An admin endpoint for a running service: read and change the batching window's cap and
the admission limits, the remedies an operator (or a runbook) reaches for when batches wait
for company that never comes (seed §3.1) or a queue grows without bound (§3.3).

    GET  /admin/serving                    every registered batcher's and controller's limits
    POST /admin/serving {"batcher": "llm", "window_cap_s": 0.005, "max_queue": 64}
    POST /admin/serving {"admission": "api_workers", "max_concurrency": 4, "max_queue": 16}

Who may call it: with a token, a request carrying `Authorization: Bearer TOKEN` (compared in
constant time) from anywhere; without one, loopback clients only. Everything else is 403.
"""

from __future__ import annotations

import hmac
import math
from collections.abc import Callable, Mapping
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse

from infersight.serving._batcher import Batcher
from infersight.serving.admission import AdmissionController

ADMIN_PATH = "/admin/serving"
_LOOPBACK = ("127.0.0.1", "::1")


class ServingControls:
    """The batchers and controllers the endpoint may change, by name. Getters, not objects,
    so that a service that swaps a batcher for a new one is always reached where it is now."""

    def __init__(
        self,
        batchers: Callable[[], Mapping[str, Batcher[Any, Any]]] = dict,
        admissions: Callable[[], Mapping[str, AdmissionController]] = dict,
        token: str | None = None,
    ) -> None:
        if token is not None and len(token) < 16:
            raise ValueError("an admin token has at least 16 characters")
        self.batchers = batchers
        self.admissions = admissions
        self.token = token

    def state(self) -> dict[str, Any]:
        return {
            "batchers": {
                name: {
                    "kind": type(b).__name__,
                    "window_cap_s": b.window_cap,
                    "max_queue": b.max_queue,
                    "max_queue_wait_s": b.max_queue_wait,
                    "max_concurrency": b.max_concurrency,
                }
                for name, b in self.batchers().items()
            },
            "admissions": {
                name: {
                    "max_concurrency": a.max_concurrency,
                    "max_queue": a.max_queue,
                    "max_wait_s": a.max_wait,
                }
                for name, a in self.admissions().items()
            },
        }

    def allowed(self, request: Request) -> bool:
        if self.token is not None:
            given = request.headers.get("authorization", "")
            return hmac.compare_digest(given.encode(), f"Bearer {self.token}".encode())
        host = request.client.host if request.client else ""
        return host in _LOOPBACK

    def apply(self, body: Any) -> dict[str, Any]:
        """Apply one change; ValueError (a 400) names what is wrong, and nothing changes then."""
        if not isinstance(body, dict):
            raise ValueError("the body is a JSON object")
        if ("batcher" in body) == ("admission" in body):
            raise ValueError('name exactly one of "batcher" or "admission"')
        if "batcher" in body:
            keys = {"batcher", "window_cap_s", "max_queue"}
            _only(body, keys)
            b = _named(self.batchers(), body["batcher"], "batcher")
            b.reconfigure(
                window_cap=_num(body, "window_cap_s", float), max_queue=_num(body, "max_queue", int)
            )
        else:
            _only(body, {"admission", "max_concurrency", "max_queue", "max_wait_s"})
            a = _named(self.admissions(), body["admission"], "admission")
            a.reconfigure(
                max_concurrency=_num(body, "max_concurrency", int),
                max_queue=_num(body, "max_queue", int),
                max_wait=_num(body, "max_wait_s", float),
            )
        return self.state()


def _only(body: dict[str, Any], keys: set[str]) -> None:
    extra = sorted(set(body) - keys)
    if extra:
        raise ValueError(f"unknown field {extra[0]!r}; fields: {', '.join(sorted(keys))}")
    if len(body) < 2:
        raise ValueError(f"nothing to change; fields: {', '.join(sorted(keys - {'batcher'}))}")


def _named(found: Mapping[str, Any], name: Any, what: str) -> Any:
    if not isinstance(name, str) or name not in found:
        raise ValueError(f"no {what} named {name!r}; there are: {', '.join(sorted(found))}")
    return found[name]


def _num(body: dict[str, Any], key: str, kind: type) -> Any:
    value = body.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{key} is a number")
    if kind is int and (not isinstance(value, int)):
        raise ValueError(f"{key} is a whole number")
    if not math.isfinite(value):
        raise ValueError(f"{key} is a finite number")
    return kind(value)


def install_serving_admin(
    app: Starlette, controls: ServingControls, path: str = ADMIN_PATH
) -> None:
    """Add GET and POST `path` to a Starlette or FastAPI app."""

    async def endpoint(request: Request) -> JSONResponse:
        if not controls.allowed(request):
            why = "a valid bearer token" if controls.token else "a loopback client"
            return JSONResponse({"error": f"forbidden: the admin endpoint needs {why}"}, 403)
        if request.method == "GET":
            return JSONResponse(controls.state())
        try:
            body = await request.json()
        except ValueError:
            return JSONResponse({"error": "the body is not JSON"}, 400)
        try:
            return JSONResponse(controls.apply(body))
        except ValueError as exc:
            return JSONResponse({"error": str(exc)}, 400)

    app.add_route(path, endpoint, methods=["GET", "POST"])
