"""HTTP integration: `Overloaded` becomes 503 with `Retry-After` (whole seconds, >= 1).

Starlette/FastAPI: `install_overload_handler(app)`. Any ASGI app: wrap it in
`OverloadedMiddleware`, which also catches an `Overloaded` raised by outer middleware layers
that Starlette's exception handlers do not see.
"""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from infersight.serving.errors import Overloaded


def overload_response(exc: Overloaded) -> JSONResponse:
    """503 with Retry-After and a short JSON body naming the reason."""
    return JSONResponse(
        {"error": "overloaded", "reason": exc.reason, "retry_after": round(exc.retry_after, 3)},
        status_code=503,
        headers={"Retry-After": exc.retry_after_header},
    )


async def overloaded_handler(request: Request, exc: Exception) -> Response:
    """Starlette exception handler for Overloaded."""
    if not isinstance(exc, Overloaded):
        raise exc
    return overload_response(exc)


def install_overload_handler(app: Starlette) -> None:
    """Register `overloaded_handler` on a Starlette (or FastAPI) app."""
    app.add_exception_handler(Overloaded, overloaded_handler)


class OverloadedMiddleware:
    """Pure ASGI middleware mapping an `Overloaded` raised before the response started to 503."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def tracking_send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, receive, tracking_send)
        except Overloaded as exc:
            if started:
                raise
            await overload_response(exc)(scope, receive, send)
