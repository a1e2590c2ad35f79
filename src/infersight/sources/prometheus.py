"""Client for the Prometheus HTTP API; works unchanged against VictoriaMetrics, Thanos, Mimir.

Async inside (httpx), with a sync facade for the CLI:

    client = PrometheusClient("http://prometheus:9090", bearer_token=...)
    series = client.query_range('sum by (instance) (up)', start, end, step=15)

    async with client:            # one connection pool and concurrency bound for many queries
        results = await asyncio.gather(*(client.aquery_range(e, s, t, 15) for e in exprs))

Long windows are split so that no request returns more than `max_points_per_query` points per
series (Prometheus refuses more than 11,000); the chunks are stitched back on the same grid.
Connection errors and 5xx/429 are retried with exponential backoff and jitter (a `Retry-After`
on 429/503 is honoured when it fits the deadline); timeouts and other 4xx are not retried. Once
`broken_after` requests to one endpoint in a row have failed with 5xx after every retry, that
endpoint is taken to be broken rather than busy: later requests to it get one try each until one
succeeds, so a command against a query engine that fails everything says so in seconds, not after
retrying each of its queries.

Deadlines are wall-clock: `timeout` bounds one HTTP request from sending to the last byte of the
answer (a server that trickles its body still stops at it), and `deadline` bounds everything the
client does from its creation (a command's whole run). Answers are streamed and refused past
`limits.response_bytes`; JSON nested past `limits.json_depth` is refused before parsing.

Every failure ends as one `SourceError` with a one-line message; URL userinfo, the token and the
password never appear in it (`infersight.redact`).
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import math
import random
import re
import ssl
import time
from collections.abc import Awaitable, Callable
from typing import Any, NamedTuple, TypeVar
from urllib.parse import urlsplit

import httpx

from infersight import userfile
from infersight.limits import Limits
from infersight.redact import Redactor, redact_url, strip_userinfo, userinfo
from infersight.sources.errors import (
    AuthError,
    BadConnection,
    BadCredentials,
    BadQuery,
    DeadlineExceeded,
    MalformedResponse,
    QueryTimeout,
    ResponseTooLarge,
    ServerError,
    ServerUnreachable,
    SourceError,
)
from infersight.sources.jsonload import JSONDepthError, loads
from infersight.sources.promseries import Series, parse_result, stitch

T = TypeVar("T")
PROMETHEUS_MAX_POINTS = 11_000
_HINT = "is the server running? check --prometheus URL"
#: what an HTTP header value may hold: visible ASCII and inner spaces (RFC 9110 field-vchar)
_HEADER_VALUE = re.compile(r"[\x21-\x7e]+(?: +[\x21-\x7e]+)*")


def _tls(ca_file: str | None, insecure: bool, client_cert: str | tuple[str, str] | None) -> Any:
    if ca_file is None and not insecure and client_cert is None:
        return True
    # read through the one reader of named files: a FIFO or /dev/zero never reaches OpenSSL
    # (which would wait on the one or read the other without end)
    try:
        cadata = None if ca_file is None else userfile.read_text(ca_file, "--ca-file")
        if client_cert is not None:
            for part in (client_cert,) if isinstance(client_cert, str) else client_cert:
                userfile.read_bytes(part, "client certificate")
    except userfile.UserFileError as exc:
        raise BadConnection(str(exc)) from None
    try:
        ctx = ssl.create_default_context(cadata=cadata)
    except (ssl.SSLError, OSError, ValueError):
        raise BadConnection(
            f"--ca-file {ca_file}: not a readable PEM certificate bundle; give the CA's "
            "certificate(s) in PEM form (-----BEGIN CERTIFICATE-----)"
        ) from None
    if insecure:
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    if client_cert is not None:
        cert, key = (client_cert, None) if isinstance(client_cert, str) else client_cert
        try:
            ctx.load_cert_chain(cert, key)
        except (ssl.SSLError, OSError, ValueError):
            raise BadConnection(
                f"client certificate {cert}: not a readable PEM certificate and key"
            ) from None
    return ctx


def _base_url(url: str) -> str:
    """The URL without userinfo, checked: scheme, host, port; BadConnection when unusable."""
    bare = strip_userinfo(url.strip())
    shown = redact_url(bare)
    try:
        parts = urlsplit(bare)
        port = parts.port
        httpx.URL(bare)
    except (ValueError, httpx.InvalidURL) as exc:
        raise BadConnection(f"--prometheus {shown}: not a usable URL ({exc})") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise BadConnection(
            f"--prometheus {shown}: needs http:// or https:// and a host, e.g. http://host:9090"
        )
    if port == 0:
        raise BadConnection(f"--prometheus {shown}: port 0 cannot be connected to")
    # a URL copied from an API call names the API itself: keep the base (and any prefix)
    return bare.rstrip("/").removesuffix("/api/v1")


def _check_header(what: str, value: str) -> None:
    if not _HEADER_VALUE.fullmatch(value):
        why = (
            "holds a line break"
            if "\n" in value or "\r" in value
            else "holds a non-ASCII or control character, or surrounding spaces"
        )
        raise BadCredentials(
            f"{what} is not a valid HTTP header value ({why}); give it without line breaks or "
            "surrounding spaces, in ASCII as issued"
        )


class _Answer(NamedTuple):
    """An HTTP answer read in full (within the size cap)."""

    status_code: int
    headers: httpx.Headers
    content: bytes
    reason_phrase: str

    @property
    def text(self) -> str:
        return self.content.decode("utf-8", "replace")


class PrometheusClient:
    def __init__(
        self,
        url: str,
        *,
        timeout: float = 30.0,
        deadline: float | None = None,
        bearer_token: str | None = None,
        basic_auth: tuple[str, str] | None = None,
        ca_file: str | None = None,
        insecure: bool = False,
        client_cert: str | tuple[str, str] | None = None,
        headers: dict[str, str] | None = None,
        max_concurrency: int = 8,
        retries: int = 3,
        backoff: float = 0.5,
        broken_after: int = 3,
        max_points_per_query: int = PROMETHEUS_MAX_POINTS,
        limits: Limits | None = None,
    ) -> None:
        if max_points_per_query < 2:
            raise ValueError("max_points_per_query must be at least 2")
        from_url = userinfo(url.strip())
        basic_auth = basic_auth or from_url
        extra = dict(headers or {})
        for name, value in extra.items():
            _check_header(f"header {name}", value)
        secrets = [v for k, v in extra.items() if k.lower() != "x-scope-orgid"]
        self._redactor = Redactor.for_connection(url, bearer_token, basic_auth, secrets)
        self._base = _base_url(url)
        self.url = redact_url(self._base)  #: for display: never holds a credential
        if bearer_token is not None:
            _check_header("--bearer-token", bearer_token)
        if basic_auth is not None and ("\n" in "".join(basic_auth) or "\r" in "".join(basic_auth)):
            raise BadCredentials("--basic-auth holds a line break; give USER:PASSWORD on one line")
        self.timeout = timeout  #: seconds for one request, first byte sent to last byte read
        self.deadline = deadline  #: seconds for everything from now (None: no bound)
        self._deadline_at = None if deadline is None else time.monotonic() + deadline
        self.limits = limits or Limits()
        self.retries = max(0, retries)
        self.backoff = backoff
        self.broken_after = max(1, broken_after)
        #: per endpoint, requests that failed with 5xx after every retry since its last success
        self._failed_in_a_row: dict[str, int] = {}
        self.max_concurrency = max(1, max_concurrency)
        self.max_points_per_query = max_points_per_query
        self.requests = 0  #: HTTP requests sent, retries included
        self._headers = {
            **extra,
            **({"Authorization": f"Bearer {bearer_token}"} if bearer_token else {}),
        }
        self._auth = httpx.BasicAuth(*basic_auth) if basic_auth else None
        self._verify = _tls(ca_file, insecure, client_cert)
        self._http: httpx.AsyncClient | None = None
        self._sem: asyncio.Semaphore | None = None
        self._users = 0

    # -- session ----------------------------------------------------------------------------------
    async def __aenter__(self) -> PrometheusClient:
        if self._users == 0:
            self._http = httpx.AsyncClient(
                base_url=self._base,
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
    def remaining(self) -> float:
        """Seconds left of the deadline (inf without one)."""
        if self._deadline_at is None:
            return math.inf
        return self._deadline_at - time.monotonic()

    def _out_of_time(self, where: str) -> DeadlineExceeded:
        return DeadlineExceeded(
            f"the command's deadline of {self.deadline:g} s ran out waiting for {where}; "
            "raise --deadline, or narrow the window or --signals"
        )

    async def _send(self, path: str, params: dict[str, str]) -> _Answer:
        """One request, its answer streamed under the size cap."""
        assert self._http is not None
        if path.endswith("/query") or path.endswith("/query_range"):
            request = self._http.build_request("POST", path, data=params)
        else:
            request = self._http.build_request("GET", path, params=params)
        cap = self.limits.response_bytes
        r = await self._http.send(request, stream=True)
        try:
            declared = r.headers.get("content-length", "")
            if declared.isdigit() and int(declared) > cap:
                raise self._too_large(path, f"declares {int(declared):,} bytes")
            body, size = [], 0
            async for chunk in r.aiter_bytes():
                size += len(chunk)
                if size > cap:
                    raise self._too_large(path, "sent more")
                body.append(chunk)
        finally:
            await r.aclose()
        return _Answer(r.status_code, r.headers, b"".join(body), r.reason_phrase)

    def _too_large(self, path: str, what: str) -> ResponseTooLarge:
        cap = self.limits.response_bytes
        return ResponseTooLarge(
            f"{self.url}{path}: the answer {what} than the {cap:,}-byte limit; narrow the window "
            f"or --signals, or {self.limits.hint('response_bytes')}"
        )

    async def _call(self, path: str, params: dict[str, str], expr: str = "") -> Any:
        """`data` of a successful answer; retries transient failures; raises SourceError."""
        try:
            return await self._call_once(path, params, expr)
        except SourceError as exc:
            exc.args = (self._redactor.scrub(str(exc)),)
            raise

    async def _call_once(self, path: str, params: dict[str, str], expr: str) -> Any:
        async with self:
            assert self._http is not None and self._sem is not None
            where = f"{self.url}{path}"
            last: SourceError | None = None
            wait = 0.0
            failed = self._failed_in_a_row.get(path, 0)
            broken = failed >= self.broken_after
            failed_5xx = False
            for attempt in range(1 if broken else self.retries + 1):
                if attempt:
                    if wait > self.remaining():
                        assert last is not None
                        raise last
                    await asyncio.sleep(wait)
                if self.remaining() <= 0:
                    raise self._out_of_time(where)
                self.requests += 1
                try:
                    async with asyncio.timeout(_finite(self.remaining())):
                        async with self._sem:
                            async with asyncio.timeout(min(self.timeout, self.remaining())):
                                r = await self._send(path, params)
                except (TimeoutError, httpx.TimeoutException):
                    if self.remaining() <= 0:
                        raise self._out_of_time(where) from None
                    raise QueryTimeout(
                        f"{where} did not answer in full within {self.timeout:g} s (a timeout is "
                        "not retried); narrow the window or raise --timeout"
                    ) from None
                except ResponseTooLarge:
                    raise
                except (httpx.TransportError, ssl.SSLError, OSError) as exc:
                    what = str(exc) or type(exc).__name__
                    last = ServerUnreachable(
                        f"cannot reach {self.url}: {what} (after {attempt + 1} tries); {_HINT}"
                    )
                    wait = self._backoff(attempt)
                    failed_5xx = False
                    continue
                if r.status_code == 429 or r.status_code >= 500:
                    failed_5xx = r.status_code >= 500
                    after = _retry_after(r) if r.status_code in (429, 503) else None
                    wait = self._backoff(attempt) if after is None else after
                    asked = f"; it asked to retry after {after:g} s" if after is not None else ""
                    if broken:
                        asked += f"; not retried, the last {failed} requests there failed"
                    last = ServerError(
                        f"{where} answered HTTP {r.status_code} (after {attempt + 1} tries"
                        f"{asked}): {_error_text(r)}"
                    )
                    if after is not None and after > min(self.remaining(), self.timeout):
                        raise last  # waiting would pass the deadline: say so now
                    continue
                data = _data(r, where, expr, self.limits.json_depth)
                self._failed_in_a_row[path] = 0
                return data
            assert last is not None
            if failed_5xx:
                self._failed_in_a_row[path] = self._failed_in_a_row.get(path, 0) + 1
            raise last

    def _backoff(self, attempt: int) -> float:
        return float(self.backoff * 2**attempt * random.uniform(0.5, 1.0))

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


def _finite(seconds: float) -> float | None:
    return None if math.isinf(seconds) else max(0.0, seconds)


def _retry_after(r: _Answer) -> float | None:
    """Seconds a `Retry-After` header asks for (delta-seconds or an HTTP date), None if none."""
    value = r.headers.get("retry-after", "").strip()
    if not value:
        return None
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - time.time())


def _error_text(r: _Answer) -> str:
    try:
        body = loads(r.content, 16)
        if isinstance(body, dict) and body.get("error"):
            return str(body["error"])[:300]
    except (json.JSONDecodeError, UnicodeDecodeError, JSONDepthError):
        pass
    text = " ".join(r.text.split())
    return text[:300] or r.reason_phrase


def _data(r: _Answer, where: str, expr: str, max_depth: int) -> Any:
    """Interpret a non-retryable answer: data on success, else the matching SourceError."""
    code = r.status_code
    if code in (401, 403):
        raise AuthError(
            f"{where} refused the request (HTTP {code}: {_error_text(r)[:100]}); check the "
            "credentials (--bearer-token(-file), --basic-auth, --http.config.file) and, for "
            "Mimir, Cortex or Thanos, --tenant"
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
        body = loads(r.content, max_depth)
    except JSONDepthError as exc:
        raise MalformedResponse(f"{where} answered JSON {exc}; not a Prometheus answer") from None
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise MalformedResponse(
            f"{where} did not answer JSON (starts {r.text[:60]!r}); is it a Prometheus API URL?"
        ) from None
    if not isinstance(body, dict) or "status" not in body:
        raise MalformedResponse(f"{where} answered JSON without `status`; not a Prometheus API?")
    if body["status"] != "success":
        err = str(body.get("error") or "no error text")[:300]
        if body.get("errorType") == "bad_data":
            raise BadQuery(f"the server rejected the query: {err} — query: {expr}", expr)
        raise ServerError(f"{where} reported an error ({body.get('errorType', '?')}): {err}")
    if "data" not in body:
        raise MalformedResponse(f"{where} answered success without `data`")
    return body["data"]
