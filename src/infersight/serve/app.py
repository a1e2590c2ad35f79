"""The HTTP service: Alertmanager webhooks in, captures and reports out.

    POST /alerts            Alertmanager webhook (payload version 4), authenticated
    GET  /healthz           liveness and queue state (no authentication: probes)
    GET  /metrics           the service's own Prometheus metrics (no authentication: counts
                            and gauges under fixed label values, nothing from an alert)
    GET  /                  recent captures, each linking to its reports
    GET  /captures/{id}/{report.html|report.md|report.json|bundle.tar.gz}
                            (both with the webhook's credentials: bundles hold logs and
                            stacks; `auth.pages: false` opens them, for a proxy that
                            authenticates)

Answers to /alerts: 200 accepted / duplicate / resolved; 401 without valid credentials; 413
for a body over `max_body_bytes`; 408 (and the connection closed) for a body not received
within `body_timeout`; 400 for a body that is not JSON; 422 for JSON that is not a version-4
notification; 503 with Retry-After when the queue is full or its folder refuses the job
(Alertmanager retries).
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import hmac
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from html import escape
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, Response
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    generate_latest,
)

from infersight.redact import Redactor
from infersight.serve.alerts import PayloadError, parse_notification
from infersight.serve.config import ServeConfig
from infersight.serve.dispatch import CaptureRecord, Decision, Dispatcher, Runner
from infersight.serve.jobs import BUNDLE, REPORTS
from infersight.serve.spool import Spool
from infersight.timeparse import iso

log = logging.getLogger("infersight.serve")
FILES = {*REPORTS.values(), BUNDLE}
MEDIA = {".html": "text/html", ".md": "text/markdown", ".json": "application/json"}


class _Metrics:
    def __init__(self, dispatcher: Dispatcher) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.notifications = Counter(
            "infersight_serve_notifications", "Webhook notifications by what became of them",
            ["result"], registry=r,
        )  # fmt: skip
        self.captures = Counter(
            "infersight_serve_captures", "Captures finished, by status", ["status"], registry=r
        )
        gauges = {
            "infersight_serve_queue_depth": ("Captures waiting", lambda: dispatcher.queued),
            "infersight_serve_captures_in_progress": (
                "Captures running", lambda: dispatcher.stats.in_progress,
            ),
            "infersight_serve_groups": ("Alert groups remembered", lambda: dispatcher.groups),
            "infersight_serve_max_concurrency": (
                "Captures allowed at once", lambda: dispatcher.max_concurrency,
            ),
        }  # fmt: skip
        for name, (doc, fn) in gauges.items():
            Gauge(name, doc, registry=r).set_function(fn)


class _Auth:
    def __init__(self, cfg: ServeConfig) -> None:
        self.disabled = cfg.auth.disabled
        token, basic = cfg.credentials()
        self.token = token.encode() if token else None
        self.basic = f"{basic[0]}:{basic[1]}".encode() if basic else None

    def ok(self, header: str | None) -> bool:
        if self.disabled:
            return True
        if not header:
            return False
        scheme, _, value = header.partition(" ")
        value = value.strip()
        if scheme.lower() == "bearer" and self.token is not None:
            return hmac.compare_digest(value.encode(), self.token)
        if scheme.lower() == "basic" and self.basic is not None:
            try:
                given = base64.b64decode(value, validate=True)
            except (binascii.Error, ValueError):
                return False
            return hmac.compare_digest(given, self.basic)
        return False

    def challenge(self) -> str:
        return 'Basic realm="infersight"' if self.basic else 'Bearer realm="infersight"'


def _refuse(status: int, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"status": "refused", "error": message}, status, headers=headers)


class _BodyRefused(Exception):
    def __init__(self, status: int, result: str, message: str) -> None:
        super().__init__(message)
        self.status, self.result = status, result


async def _body(request: Request, cap: int, timeout: float) -> bytes:
    """The body, read within `timeout` seconds in all and up to `cap` bytes (no further)."""
    declared = request.headers.get("content-length", "")
    too_large = _BodyRefused(413, "too_large", f"body over {cap} bytes")
    if declared.isdigit() and int(declared) > cap:
        raise too_large
    chunks, size = [], 0
    try:
        async with asyncio.timeout(timeout):
            async for chunk in request.stream():
                size += len(chunk)
                if size > cap:
                    raise too_large
                chunks.append(chunk)
    except TimeoutError:
        raise _BodyRefused(
            408, "timeout", f"body not received within {timeout:g} s; send it whole"
        ) from None
    return b"".join(chunks)


def _page(records: list[CaptureRecord]) -> str:
    rows = []
    for r in reversed(records):
        links = " ".join(
            f'<a href="captures/{escape(r.id)}/{name}">{fmt}</a>'
            for fmt, name in [*REPORTS.items(), ("bundle", BUNDLE)]
            if r.status == "done"
        )
        roots = escape(", ".join(r.root_causes) or r.error or r.summary)
        rows.append(
            f"<tr><td>{escape(iso(r.received_at))}</td><td>{escape(r.alertname)}</td>"
            f"<td>{escape(r.status)}</td><td>{r.notifications}</td><td>{roots}</td>"
            f"<td>{links}</td></tr>"
        )
    body = "\n".join(rows) or '<tr><td colspan="6">no captures yet</td></tr>'
    return (
        "<!doctype html><html><head><meta charset='utf-8'><title>infersight captures</title>"
        "<style>body{font-family:sans-serif}td,th{padding:4px 8px;text-align:left}</style>"
        "</head><body><h1>Recent captures</h1><table><tr><th>received</th><th>alert</th>"
        "<th>status</th><th>notifications</th><th>root causes</th><th>reports</th></tr>"
        f"{body}</table></body></html>"
    )


def create_app(cfg: ServeConfig, runner: Runner, dispatcher: Dispatcher | None = None) -> FastAPI:
    """The service; `runner` does one capture (the real one: `jobs.capture_runner`)."""
    auth = _Auth(cfg)
    redactor = Redactor(cfg.secrets())
    d = dispatcher or Dispatcher(
        runner,
        max_concurrency=cfg.max_concurrency,
        queue_size=cfg.queue_size,
        dedupe_window=cfg.dedupe_window,
        max_groups=cfg.max_groups,
        recent=cfg.recent,
        redactor=redactor,
        spool=Spool(cfg.queue_folder()),
    )
    metrics = _Metrics(d)
    previous = d.on_done

    def finished(record: CaptureRecord) -> None:
        metrics.captures.labels(record.status).inc()
        log.info("capture %s %s: %s", record.id, record.status, record.error or record.summary)
        if previous is not None:
            previous(record)

    d.on_done = finished

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        await d.start()
        try:
            yield
        finally:
            await d.stop(cfg.shutdown_grace)

    app = FastAPI(title="infersight serve", lifespan=lifespan, docs_url=None, redoc_url=None)
    app.state.dispatcher = d

    @app.post("/alerts")
    async def alerts(request: Request) -> Response:
        if not auth.ok(request.headers.get("authorization")):
            metrics.notifications.labels("unauthenticated").inc()
            return _refuse(
                401, "missing or wrong credentials", {"WWW-Authenticate": auth.challenge()}
            )
        try:
            body = await _body(request, cfg.max_body_bytes, cfg.body_timeout)
        except _BodyRefused as exc:
            metrics.notifications.labels(exc.result).inc()
            # a sender that stalls gets its connection closed, not drained for the next request
            close = {"Connection": "close"} if exc.status == 408 else None
            return _refuse(exc.status, str(exc), close)
        try:
            n = parse_notification(body)
        except PayloadError as exc:
            metrics.notifications.labels("malformed").inc()
            return _refuse(exc.status, str(exc))
        decision, record = d.submit(n)
        metrics.notifications.labels(decision.value).inc()
        retry = {"Retry-After": str(cfg.retry_after)}
        if decision is Decision.SHED:
            log.warning("queue full: refused group %s (the sender retries)", n.name())
            return _refuse(503, "too many captures waiting; retry later", retry)
        if decision is Decision.UNSTORED:
            log.error("refused group %s (the sender retries): %s", n.name(), d.last_error)
            return _refuse(503, "the capture could not be queued on disk; retry later", retry)
        if decision is Decision.ACCEPTED and record is not None:
            log.info("capture %s queued for %s", record.id, record.alertname)
        return JSONResponse({"status": decision.value, "capture": record.id if record else None})

    @app.get("/healthz")
    async def healthz() -> JSONResponse:
        return JSONResponse(
            {
                "status": "ok",
                "queued": d.queued,
                "in_progress": d.stats.in_progress,
                "groups": d.groups,
            }
        )

    @app.get("/metrics")
    async def prom_metrics() -> Response:
        return Response(generate_latest(metrics.registry), media_type=CONTENT_TYPE_LATEST)

    def page_refused(request: Request) -> Response | None:
        if cfg.auth.pages and not auth.ok(request.headers.get("authorization")):
            challenge = {"WWW-Authenticate": auth.challenge()}
            return _refuse(401, "missing or wrong credentials", challenge)
        return None

    @app.get("/")
    async def page(request: Request) -> Response:
        return page_refused(request) or HTMLResponse(_page(list(d.records.values())))

    @app.get("/captures/{capture_id}/{name}")
    async def report(request: Request, capture_id: str, name: str) -> Response:
        refused = page_refused(request)
        if refused is not None:
            return refused
        record = d.records.get(capture_id)
        if record is None or name not in FILES or record.status != "done":
            return _refuse(404, "no such capture or file")
        path = Path(cfg.out_dir) / record.id / name
        if not path.is_file():
            return _refuse(404, "no such capture or file")
        return FileResponse(path, media_type=MEDIA.get(path.suffix, "application/gzip"))

    return app
