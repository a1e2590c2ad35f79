"""Options shared by every command that talks to a Prometheus-compatible server."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated

import typer

from infersight.cli.common import EXIT_USAGE, fail

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
    float, typer.Option("--timeout", help="Seconds to wait for one HTTP answer.", min=0.1)
]


@dataclass(frozen=True)
class Connection:
    url: str
    bearer_token: str | None
    basic_auth: str | None
    ca_file: str | None
    insecure: bool
    timeout: float

    def client(self) -> PrometheusClient:
        # imported here: httpx takes a while to load, and most commands never need it
        from infersight.sources.prometheus import PrometheusClient

        if not self.url.startswith(("http://", "https://")):
            fail(f"--prometheus {self.url!r} must start with http:// or https://", EXIT_USAGE)
        basic: tuple[str, str] | None = None
        if self.basic_auth is not None:
            user, sep, password = self.basic_auth.partition(":")
            if not sep:
                fail("--basic-auth must be USER:PASSWORD", EXIT_USAGE)
            basic = (user, password)
        if self.ca_file is not None and not os.path.isfile(self.ca_file):
            fail(f"--ca-file {self.ca_file}: no such file", EXIT_USAGE)
        return PrometheusClient(
            self.url,
            timeout=self.timeout,
            bearer_token=self.bearer_token,
            basic_auth=basic,
            ca_file=self.ca_file,
            insecure=self.insecure,
        )
