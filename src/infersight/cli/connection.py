"""Options shared by every command that talks to a Prometheus-compatible server."""

from __future__ import annotations

import functools
import inspect
import os
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, get_type_hints

import typer

from infersight.cli.common import EXIT_USAGE, fail
from infersight.redact import redact_url

if TYPE_CHECKING:
    from infersight.sources.connect import ConnectionSettings
    from infersight.sources.prometheus import PrometheusClient

PrometheusOpt = Annotated[
    str,
    typer.Option(
        "--prometheus",
        "-p",
        help="Base URL of a Prometheus-compatible server (Prometheus, VictoriaMetrics, Thanos "
        "Query, Mimir with its /prometheus prefix).",
        envvar="INFERSIGHT_PROMETHEUS",
    ),
]
BearerOpt = Annotated[
    str | None,
    typer.Option(
        "--bearer-token",
        help="Bearer token (or set INFERSIGHT_BEARER_TOKEN).",
        envvar="INFERSIGHT_BEARER_TOKEN",
    ),
]
BasicOpt = Annotated[
    str | None,
    typer.Option(
        "--basic-auth",
        help="USER:PASSWORD for HTTP basic auth (or set INFERSIGHT_BASIC_AUTH).",
        envvar="INFERSIGHT_BASIC_AUTH",
    ),
]
CaOpt = Annotated[str | None, typer.Option("--ca-file", help="CA bundle to verify TLS with.")]
InsecureOpt = Annotated[
    bool, typer.Option("--insecure", help="Do not verify the server's TLS certificate.")
]


def parse_timeout(value: str | float) -> float:
    """`--timeout`: a duration with a unit (10s, 2m, 1m30s) or a bare number of seconds."""
    from infersight.timeparse import parse_duration

    if isinstance(value, int | float):
        seconds = float(value)
    else:
        try:
            seconds = parse_duration(value)
        except ValueError as exc:
            raise typer.BadParameter(f"{exc}; e.g. --timeout 30s, 2m or 45") from None
    if not 0.1 <= seconds < 1e9:
        raise typer.BadParameter(f"{value!r}: give at least 0.1 s (e.g. --timeout 30s)")
    return seconds


TimeoutOpt = Annotated[
    float,
    typer.Option(
        "--timeout",
        help="How long one HTTP request may take in all, from sending it to the last byte of the "
        "answer: 30s, 2m, or a bare number of seconds (a timeout is not retried); default 30s.",
        parser=parse_timeout,
        metavar="DURATION",
        show_default=False,
    ),
]
#: the whole command's time with a server, when --deadline is not given: a hung server must not
#: hold an on-call engineer longer than this
DEFAULT_DEADLINE_S = 30.0


def parse_deadline(value: str | float) -> float:
    """`--deadline`: a duration with a unit (30s, 2m) or a bare number of seconds."""
    from infersight.timeparse import parse_duration

    try:
        seconds = float(value) if isinstance(value, int | float) else parse_duration(value)
    except ValueError as exc:
        raise typer.BadParameter(f"{exc}; e.g. --deadline 30s, 2m or 45") from None
    if not 0.1 <= seconds < 1e9:
        raise typer.BadParameter(f"{value!r}: give at least 0.1 s (e.g. --deadline 30s)")
    return seconds


#: --deadline not given: INFERSIGHT_DEADLINE, read only when a server is reached (a bad value
#: never breaks a command that reads a bundle), else DEFAULT_DEADLINE_S
DeadlineOpt = Annotated[
    float | None,
    typer.Option(
        "--deadline",
        help="How long the whole command may spend with the server, every query and retry "
        "included: 30s, 2m, or a bare number of seconds (default 30s, or INFERSIGHT_DEADLINE); "
        "raise it for long windows or large fleets.",
        parser=parse_deadline,
        metavar="DURATION",
    ),
]
LimitOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--raise-limit",
        help="NAME=VALUE: raise a cap on input size (grid_points, grid_values, total_bytes, "
        "member_bytes, members, json_depth, response_bytes; or set INFERSIGHT_LIMITS). "
        "Repeatable.",
    ),
]


def resolve_deadline(given: float | None) -> float:
    """The command's deadline: --deadline, else INFERSIGHT_DEADLINE, else the default; called
    only where a server is reached, so a bad variable fails those commands, in one line."""
    if given is not None:
        return given
    text = os.environ.get("INFERSIGHT_DEADLINE")
    if text is None or not text.strip():
        return DEFAULT_DEADLINE_S
    try:
        return parse_deadline(text)
    except typer.BadParameter as exc:
        fail(f"INFERSIGHT_DEADLINE={text!r}: {exc.message}", EXIT_USAGE)


HeaderOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--header",
        "-H",
        help="NAME: VALUE sent with every request (e.g. 'X-Team: infra'); repeatable.",
    ),
]
TenantOpt = Annotated[
    str | None,
    typer.Option(
        "--tenant",
        help="Tenant of Mimir, Cortex or Thanos: sent as the X-Scope-OrgID header "
        "(or set INFERSIGHT_TENANT).",
        envvar="INFERSIGHT_TENANT",
    ),
]
TokenFileOpt = Annotated[
    Path | None,
    typer.Option(
        "--bearer-token-file",
        help="Read the bearer token from this file (its first line); keeps it out of the "
        "process list and shell history.",
    ),
]
HTTPConfigOpt = Annotated[
    Path | None,
    typer.Option(
        "--http.config.file",
        help="HTTP client config in the format promtool and amtool read (authorization, "
        "basic_auth, tls_config, http_headers).",
    ),
]


@dataclass(frozen=True)
class ConnectionExtras:
    """The connection options added to every server command by `with_connection_options`."""

    headers: tuple[str, ...] = ()
    tenant: str | None = None
    bearer_token_file: Path | None = None
    http_config_file: Path | None = None


_NO_EXTRAS = ConnectionExtras()
_extras: ContextVar[ConnectionExtras | None] = ContextVar("connection_extras", default=None)


def _current_extras() -> ConnectionExtras:
    return _extras.get() or _NO_EXTRAS


def with_connection_options(fn: Callable[..., None]) -> Callable[..., None]:
    """The command `fn` with --header, --tenant, --bearer-token-file and --http.config.file
    added; a `Connection` made while it runs picks them up."""
    hints = get_type_hints(fn, include_extras=True)
    sig = inspect.signature(fn)
    added = {
        "header": HeaderOpt,
        "tenant": TenantOpt,
        "bearer_token_file": TokenFileOpt,
        "http_config_file": HTTPConfigOpt,
    }
    params = [
        p.replace(annotation=hints.get(p.name, p.annotation)) for p in sig.parameters.values()
    ]
    params += [
        inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=None, annotation=ann)
        for name, ann in added.items()
    ]

    @functools.wraps(fn)
    def command(*args: Any, **kwargs: Any) -> None:
        extras = ConnectionExtras(
            tuple(kwargs.pop("header", None) or ()),
            kwargs.pop("tenant", None),
            kwargs.pop("bearer_token_file", None),
            kwargs.pop("http_config_file", None),
        )
        token = _extras.set(extras)
        try:
            fn(*args, **kwargs)
        finally:
            _extras.reset(token)

    command.__signature__ = sig.replace(parameters=params)  # type: ignore[attr-defined]
    command.__annotations__ = {**hints, **added}
    return command


@dataclass(frozen=True)
class Connection:
    """How to reach the server. `url` is for display and storage: its credentials are masked
    (the raw URL is kept apart, for the client only)."""

    url: str
    bearer_token: str | None = field(repr=False)
    basic_auth: str | None = field(repr=False)
    ca_file: str | None
    insecure: bool
    timeout: float
    deadline: float | None = None  # None: `resolve_deadline` when the server is reached
    limits: tuple[str, ...] = ()
    extras: ConnectionExtras = field(default_factory=_current_extras)
    _raw_url: str = field(default="", init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_raw_url", self.url)
        object.__setattr__(self, "url", redact_url(self.url))

    def settings(self) -> ConnectionSettings:
        """These options as the settings the sources read; a usage error when malformed."""
        from pydantic import SecretStr

        from infersight.sources.connect import ConnectionSettings, parse_header

        headers: dict[str, str] = {}
        try:
            for text in self.extras.headers:
                name, value = parse_header(text)
                headers[name] = value
        except ValueError as exc:
            fail(str(exc), EXIT_USAGE)
        return ConnectionSettings(
            url=self._raw_url,
            headers=headers,
            tenant=self.extras.tenant,
            bearer_token=SecretStr(self.bearer_token) if self.bearer_token is not None else None,
            bearer_token_file=self.extras.bearer_token_file,
            basic_auth=SecretStr(self.basic_auth) if self.basic_auth is not None else None,
            http_config_file=self.extras.http_config_file,
            ca_file=self.ca_file,
            insecure=self.insecure,
            timeout=self.timeout,
            deadline=resolve_deadline(self.deadline),
        )

    def client(self) -> PrometheusClient:
        # imported here: httpx takes a while to load, and most commands never need it
        from infersight.limits import LimitError, current
        from infersight.sources.errors import BadConnection, BadCredentials

        if not self._raw_url.strip().startswith(("http://", "https://")):
            fail(f"--prometheus {self.url!r} must start with http:// or https://", EXIT_USAGE)
        if self.basic_auth is not None and ":" not in self.basic_auth:
            fail("--basic-auth must be USER:PASSWORD", EXIT_USAGE)
        try:
            limits = current(self.limits)
        except LimitError as exc:
            fail(str(exc), EXIT_USAGE)
        try:
            return self.settings().client(limits)
        except (BadConnection, BadCredentials) as exc:
            fail(str(exc), EXIT_USAGE)
