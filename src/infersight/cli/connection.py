"""Options shared by every command that talks to a Prometheus-compatible server."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated

import typer

from infersight.cli.common import EXIT_USAGE, fail
from infersight.redact import redact_url

if TYPE_CHECKING:
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
TimeoutOpt = Annotated[
    float,
    typer.Option(
        "--timeout",
        help="Seconds one HTTP request may take in all, from sending it to the last byte of the "
        "answer (a timeout is not retried).",
        min=0.1,
    ),
]
#: the whole command's time with a server, when --deadline is not given: a hung server must not
#: hold an on-call engineer longer than this
DEFAULT_DEADLINE_S = 30.0
DeadlineOpt = Annotated[
    float,
    typer.Option(
        "--deadline",
        help="Seconds the whole command may spend with the server, every query and retry "
        "included (or set INFERSIGHT_DEADLINE); raise it for long windows or large fleets.",
        envvar="INFERSIGHT_DEADLINE",
        min=0.1,
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


def _env_deadline() -> float:
    try:
        value = float(os.environ.get("INFERSIGHT_DEADLINE", DEFAULT_DEADLINE_S))
    except ValueError:
        fail("INFERSIGHT_DEADLINE must be a number of seconds", EXIT_USAGE)
    if not 0 < value < 1e9:
        fail("INFERSIGHT_DEADLINE must be a positive number of seconds", EXIT_USAGE)
    return value


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
    deadline: float = field(default_factory=_env_deadline)
    limits: tuple[str, ...] = ()
    _raw_url: str = field(default="", init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_raw_url", self.url)
        object.__setattr__(self, "url", redact_url(self.url))

    def client(self) -> PrometheusClient:
        # imported here: httpx takes a while to load, and most commands never need it
        from infersight.limits import LimitError, current
        from infersight.sources.errors import BadConnection, BadCredentials
        from infersight.sources.prometheus import PrometheusClient

        if not self._raw_url.strip().startswith(("http://", "https://")):
            fail(f"--prometheus {self.url!r} must start with http:// or https://", EXIT_USAGE)
        basic: tuple[str, str] | None = None
        if self.basic_auth is not None:
            user, sep, password = self.basic_auth.partition(":")
            if not sep:
                fail("--basic-auth must be USER:PASSWORD", EXIT_USAGE)
            basic = (user, password)
        if self.ca_file is not None and not os.path.isfile(self.ca_file):
            fail(f"--ca-file {self.ca_file}: no such file", EXIT_USAGE)
        try:
            limits = current(self.limits)
        except LimitError as exc:
            fail(str(exc), EXIT_USAGE)
        try:
            return PrometheusClient(
                self._raw_url,
                timeout=self.timeout,
                deadline=self.deadline,
                bearer_token=self.bearer_token,
                basic_auth=basic,
                ca_file=self.ca_file,
                insecure=self.insecure,
                limits=limits,
            )
        except (BadConnection, BadCredentials) as exc:
            fail(str(exc), EXIT_USAGE)
