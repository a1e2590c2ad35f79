"""Client for the Prometheus HTTP API; works unchanged against VictoriaMetrics, Thanos, Mimir.

Async inside (httpx), with a sync facade for the CLI:

    client = PrometheusClient("http://prometheus:9090", bearer_token=...)
    series = client.query_range('sum by (instance) (up)', start, end, step=15)

    async with client:            # one connection pool and concurrency bound for many queries
        results = await asyncio.gather(*(client.aquery_range(e, s, t, 15) for e in exprs))

Long windows are split so that no request returns more than `max_points_per_query` points per
series (Prometheus refuses more than 11,000); the chunks are stitched back on the same grid.
Transient failures (connect errors, timeouts, 429, 5xx) are retried with exponential backoff and
jitter; other 4xx are not. Every failure ends as one `SourceError` with a one-line message.
"""

from __future__ import annotations

import asyncio
import json
import math
import random
import ssl
from collections.abc import Awaitable, Callable
from typing import Any, NamedTuple, TypeVar

import httpx
import numpy as np
import numpy.typing as npt

from infersight.sources.errors import (
    AuthError,
    BadQuery,
    MalformedResponse,
    QueryTimeout,
    ServerError,
    ServerUnreachable,
    SourceError,
)

FloatArray = npt.NDArray[np.float64]
T = TypeVar("T")
PROMETHEUS_MAX_POINTS = 11_000
_HINT = "is the server running? check --prometheus URL"


class Series(NamedTuple):
    """One returned series: its labels (with `__name__` when the server kept it) and samples."""

    labels: dict[str, str]
    ts: FloatArray
    values: FloatArray


def _floats(raw: list[Any]) -> tuple[FloatArray, FloatArray]:
    """[[ts, "value"], ...] → (ts, values); "NaN", "+Inf", "-Inf" parse as floats."""
    if not raw:
        return np.empty(0), np.empty(0)
    try:
        ts = np.fromiter((p[0] for p in raw), dtype=np.float64, count=len(raw))
        vals = np.array([p[1] for p in raw], dtype=np.float64)
    except (TypeError, ValueError, IndexError, KeyError) as exc:
        raise MalformedResponse(f"unexpected sample in response: {exc}") from None
    return ts, vals


def parse_result(data: Any) -> list[Series]:
    """The `data` of a query / query_range answer as series (a scalar is one unlabelled series)."""
    if not isinstance(data, dict) or "resultType" not in data or "result" not in data:
        raise MalformedResponse("response `data` lacks resultType/result")
    kind, result = data["resultType"], data["result"]
    if kind in ("scalar", "string"):
        if not isinstance(result, list) or len(result) != 2:
            raise MalformedResponse(f"unexpected {kind} result")
        ts, vals = _floats([result]) if kind == "scalar" else (np.empty(0), np.empty(0))
        return [Series({}, ts, vals)]
    if kind not in ("matrix", "vector") or not isinstance(result, list):
        raise MalformedResponse(f"unexpected resultType {kind!r}")
    out = []
    for item in result:
        if not isinstance(item, dict) or not isinstance(item.get("metric"), dict):
            raise MalformedResponse("result item without `metric` labels")
        samples = item.get("values", []) if kind == "matrix" else [item.get("value")]
        if not isinstance(samples, list) or (kind == "vector" and samples == [None]):
            raise MalformedResponse(f"{kind} item without samples")
        ts, vals = _floats(samples)
        out.append(Series({str(k): str(v) for k, v in item["metric"].items()}, ts, vals))
    return out


def stitch(chunks: list[list[Series]]) -> list[Series]:
    """Chunks of one range query, in time order → one series per label set, no repeated ts."""
    parts: dict[tuple[tuple[str, str], ...], list[Series]] = {}
    for chunk in chunks:
        for s in chunk:
            parts.setdefault(tuple(sorted(s.labels.items())), []).append(s)
    out = []
    for pieces in parts.values():
        ts = np.concatenate([p.ts for p in pieces])
        vals = np.concatenate([p.values for p in pieces])
        keep = np.ones(len(ts), dtype=bool)
        keep[1:] = ts[1:] > ts[:-1]  # drop a boundary point served twice
        out.append(Series(pieces[0].labels, ts[keep], vals[keep]))
    return out


def _tls(ca_file: str | None, insecure: bool, client_cert: str | tuple[str, str] | None) -> Any:
    if ca_file is None and not insecure and client_cert is None:
        return True
    ctx = ssl.create_default_context(cafile=ca_file)
    if insecure:
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    if client_cert is not None:
        cert, key = (client_cert, None) if isinstance(client_cert, str) else client_cert
        ctx.load_cert_chain(cert, key)
    return ctx


class PrometheusClient:
    def __init__(
        self,
        url: str,
        *,
        timeout: float = 30.0,
        bearer_token: str | None = None,
        basic_auth: tuple[str, str] | None = None,
        ca_file: str | None = None,
        insecure: bool = False,
        client_cert: str | tuple[str, str] | None = None,
        max_concurrency: int = 8,
        retries: int = 3,
        backoff: float = 0.5,
        max_points_per_query: int = PROMETHEUS_MAX_POINTS,
    ) -> None:
        if max_points_per_query < 2:
            raise ValueError("max_points_per_query must be at least 2")
        # a URL copied from an API call names the API itself: keep the base (and any prefix)
        self.url = url.rstrip("/").removesuffix("/api/v1")
        self.timeout = timeout
        self.retries = max(0, retries)
        self.backoff = backoff
        self.max_concurrency = max(1, max_concurrency)
        self.max_points_per_query = max_points_per_query
        self.requests = 0  #: HTTP requests sent, retries included
        self._headers = {"Authorization": f"Bearer {bearer_token}"} if bearer_token else {}
        self._auth = httpx.BasicAuth(*basic_auth) if basic_auth else None
        self._verify = _tls(ca_file, insecure, client_cert)
        self._http: httpx.AsyncClient | None = None
        self._sem: asyncio.Semaphore | None = None
        self._users = 0

    # -- session ----------------------------------------------------------------------------------
    async def __aenter__(self) -> PrometheusClient:
        if self._users == 0:
            self._http = httpx.AsyncClient(
                base_url=self.url,
                headers=self._headers,
                auth=self._auth,
                verify=self._verify,
                timeout=self.timeout,
                limits=httpx.Limits(max_connections=self.max_concurrency),
            )
            self._sem = asyncio.Semaphore(self.max_concurrency)
        self._users += 1
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._users -= 1
        if self._users == 0 and self._http is not None:
            http, self._http, self._sem = self._http, None, None
            await http.aclose()

    def run(self, fn: Callable[[], Awaitable[T]]) -> T:
        """Run an async operation from sync code, in a session of its own."""

        async def scoped() -> T:
            async with self:
                return await fn()

        return asyncio.run(scoped())

    # -- one request --------------------------------------------------------------------------
    async def _call(self, path: str, params: dict[str, str], expr: str = "") -> Any:
        """`data` of a successful answer; retries transient failures; raises SourceError."""
        async with self:
            assert self._http is not None and self._sem is not None
            where = f"{self.url}{path}"
            last: SourceError | None = None
            for attempt in range(self.retries + 1):
                if attempt:
                    await asyncio.sleep(
                        self.backoff * 2 ** (attempt - 1) * random.uniform(0.5, 1.0)
                    )
                self.requests += 1
                try:
                    async with self._sem:
                        if path.endswith("/query") or path.endswith("/query_range"):
                            r = await self._http.post(path, data=params)
                        else:
                            r = await self._http.get(path, params=params)
                except httpx.TimeoutException:
                    last = QueryTimeout(
                        f"{where} did not answer within {self.timeout:g} s "
                        f"(after {attempt + 1} tries); narrow the window or raise --timeout"
                    )
                    continue
                except (httpx.TransportError, ssl.SSLError, OSError) as exc:
                    what = str(exc) or type(exc).__name__
                    last = ServerUnreachable(
                        f"cannot reach {self.url}: {what} (after {attempt + 1} tries); {_HINT}"
                    )
                    continue
                if r.status_code == 429 or r.status_code >= 500:
                    last = ServerError(
                        f"{where} answered HTTP {r.status_code} (after {attempt + 1} tries): "
                        f"{_error_text(r)}"
                    )
                    continue
                return _data(r, where, expr)
            assert last is not None
            raise last

    # -- API ------------------------------------------------------------------------------------
    async def aquery(self, expr: str, at: float) -> list[Series]:
        data = await self._call("/api/v1/query", {"query": expr, "time": _fmt(at)}, expr)
        return parse_result(data)

    async def aquery_range(self, expr: str, start: float, end: float, step: float) -> list[Series]:
        if step <= 0 or end < start:
            raise ValueError(f"bad range: start={start}, end={end}, step={step}")
        n = math.floor((end - start) / step + 1e-9) + 1
        per = self.max_points_per_query
        bounds = [
            (start + i * step, start + (min(i + per, n) - 1) * step) for i in range(0, n, per)
        ]

        async def chunk(s: float, e: float) -> list[Series]:
            params = {"query": expr, "start": _fmt(s), "end": _fmt(e), "step": _fmt(step)}
            return parse_result(await self._call("/api/v1/query_range", params, expr))

        async with self:
            chunks = await asyncio.gather(*(chunk(s, e) for s, e in bounds))
        return chunks[0] if len(chunks) == 1 else stitch(list(chunks))

    async def ametric_names(
        self, start: float | None = None, end: float | None = None
    ) -> list[str]:
        params = {}
        if start is not None:
            params["start"] = _fmt(start)
        if end is not None:
            params["end"] = _fmt(end)
        data = await self._call("/api/v1/label/__name__/values", params)
        if not isinstance(data, list) or not all(isinstance(x, str) for x in data):
            raise MalformedResponse(f"{self.url}: metric names are not a list of strings")
        return sorted(data)

    async def abuildinfo(self) -> dict[str, str]:
        data = await self._call("/api/v1/status/buildinfo", {})
        if not isinstance(data, dict):
            raise MalformedResponse(f"{self.url}: buildinfo is not an object")
        return {str(k): str(v) for k, v in data.items()}

    # -- sync facade ----------------------------------------------------------------------------
    def query(self, expr: str, at: float) -> list[Series]:
        return self.run(lambda: self.aquery(expr, at))

    def query_range(self, expr: str, start: float, end: float, step: float) -> list[Series]:
        return self.run(lambda: self.aquery_range(expr, start, end, step))

    def metric_names(self, start: float | None = None, end: float | None = None) -> list[str]:
        return self.run(lambda: self.ametric_names(start, end))

    def buildinfo(self) -> dict[str, str]:
        return self.run(self.abuildinfo)


def _fmt(x: float) -> str:
    return f"{x:.3f}".rstrip("0").rstrip(".")


def _error_text(r: httpx.Response) -> str:
    try:
        body = r.json()
        if isinstance(body, dict) and body.get("error"):
            return str(body["error"])
    except (json.JSONDecodeError, UnicodeDecodeError):
        pass
    text = r.text.strip().replace("\n", " ")
    return text[:300] or r.reason_phrase


def _data(r: httpx.Response, where: str, expr: str) -> Any:
    """Interpret a non-retryable answer: data on success, else the matching SourceError."""
    code = r.status_code
    if code in (401, 403):
        raise AuthError(
            f"{where} refused the credentials (HTTP {code}); check --bearer-token / --basic-auth"
        )
    if code in (400, 422):
        raise BadQuery(f"the server rejected the query: {_error_text(r)} — query: {expr}", expr)
    if code == 404:
        raise ServerError(
            f"{where} answered HTTP 404 (no Prometheus API there); check --prometheus: the "
            "server's base URL, with its path prefix if it has one (e.g. http://host:9090/prometheus)"
        )
    if code != 200:
        raise ServerError(f"{where} answered HTTP {code}: {_error_text(r)}; check --prometheus URL")
    try:
        body = r.json()
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise MalformedResponse(
            f"{where} did not answer JSON (starts {r.text[:60]!r}); is it a Prometheus API URL?"
        ) from None
    if not isinstance(body, dict) or "status" not in body:
        raise MalformedResponse(f"{where} answered JSON without `status`; not a Prometheus API?")
    if body["status"] != "success":
        err = str(body.get("error") or "no error text")
        if body.get("errorType") == "bad_data":
            raise BadQuery(f"the server rejected the query: {err} — query: {expr}", expr)
        raise ServerError(f"{where} reported an error ({body.get('errorType', '?')}): {err}")
    if "data" not in body:
        raise MalformedResponse(f"{where} answered success without `data`")
    return body["data"]
