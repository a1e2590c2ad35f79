"""How to reach a Prometheus-compatible server, from flags, a config file or both.

One model for every caller (the CLI's connection options, `infersight serve`'s config file):

    ConnectionSettings(url=..., headers={...}, tenant="team-a", bearer_token_file=...,
                       http_config_file=..., timeout=30).client(limits)

Credentials come from exactly one place: a bearer token (inline or from a file), basic auth, or
the `--http.config.file`; two of them at once is refused rather than one silently winning.
`tenant` is sent as `X-Scope-OrgID` (Mimir, Cortex, Thanos, Loki). Secrets are `SecretStr`:
their repr and the model's dump never show them.
"""

from __future__ import annotations

import contextlib
import os
import re
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator

from infersight.limits import Limits
from infersight.redact import redact_url, register, register_basic_auth, userinfo
from infersight.sources.errors import BadConnection, BadCredentials
from infersight.sources.httpconfig import HTTPConfigError, read_http_config, read_secret_file
from infersight.sources.prometheus import PrometheusClient

TENANT_HEADER = "X-Scope-OrgID"
_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
PathT = TypeVar("PathT", bound=str | os.PathLike[str])


def parse_header(text: str) -> tuple[str, str]:
    """`Name: value` (or `Name=value`) → (name, value); ValueError saying what is wrong."""
    m = re.match(r"\s*([^:=\s]+)\s*[:=]\s?(.*)$", text)
    if m is None or not _TOKEN.fullmatch(m.group(1)):
        raise ValueError(f"--header {text.split(':')[0]!r}: give NAME: VALUE, e.g. 'X-Team: infra'")
    name, value = m.group(1), m.group(2).strip()
    if name.lower() in ("authorization", "host", "content-length"):
        raise ValueError(
            f"--header {name}: set credentials with --bearer-token(-file) or --basic-auth"
        )
    if not value:
        raise ValueError(f"--header {name}: has no value")
    return name, value


def file_name(value: PathT) -> PathT:
    """A file name as a config file gives it: one with a NUL byte names no file (open() would
    raise ValueError, not OSError), so it is refused where the config is validated."""
    if "\0" in str(value):
        raise ValueError("holds a NUL byte; not a file name")
    return value


class ConnectionSettings(BaseModel):
    """Everything needed to talk to one server; `url` may hold userinfo (masked when shown)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    url: str = Field(description="Base URL of the Prometheus-compatible server.")
    headers: dict[str, str] = Field(default_factory=dict, description="Extra HTTP headers.")
    tenant: str | None = Field(None, description="Sent as X-Scope-OrgID (Mimir, Cortex, Thanos).")
    bearer_token: SecretStr | None = None
    bearer_token_file: Path | None = None
    basic_auth: SecretStr | None = Field(None, description="USER:PASSWORD")
    http_config_file: Path | None = Field(
        None, description="An HTTP config file as promtool and amtool read."
    )
    ca_file: str | None = None
    insecure: bool = False
    timeout: float = Field(30.0, gt=0)
    deadline: float | None = Field(None, gt=0)

    @field_validator("bearer_token_file", "http_config_file", "ca_file")
    @classmethod
    def _file_name(cls, v: Path | str | None) -> Path | str | None:
        return v if v is None else file_name(v)

    @field_validator("headers")
    @classmethod
    def _headers(cls, v: dict[str, str]) -> dict[str, str]:
        for name, value in v.items():
            parse_header(f"{name}: {value}")
        return v

    def secrets(self) -> list[str]:
        """Every credential these settings hold or name, read from its file where it lives in
        one (and registered with the redaction layer). A file that cannot be read is skipped
        here: `client()` refuses it, in one line, when the server is reached."""
        found = [v for k, v in self.headers.items() if k.lower() != TENANT_HEADER.lower()]
        if self.bearer_token is not None:
            found.append(self.bearer_token.get_secret_value())
        if self.basic_auth is not None:
            user, _, password = self.basic_auth.get_secret_value().partition(":")
            register_basic_auth(user, password)
            found.append(password)
        creds = userinfo(self.url)
        if creds is not None:
            register_basic_auth(*creds)
            found.append(creds[1])
        with contextlib.suppress(HTTPConfigError):
            if self.bearer_token_file is not None:
                found.append(read_secret_file(self.bearer_token_file, "--bearer-token-file"))
        with contextlib.suppress(HTTPConfigError):
            if self.http_config_file is not None:
                cfg = read_http_config(self.http_config_file)
                found += [cfg.bearer_token or "", *cfg.headers.values()]
                found += [cfg.basic_auth[1]] if cfg.basic_auth else []
        register(*found)
        return [s for s in found if s]

    def shown_url(self) -> str:
        return redact_url(self.url)

    def check(self) -> None:
        """What a client would refuse, refused now (`infersight serve` at its start): files
        unreadable, credentials from more than one place, a URL, header or TLS file unusable.
        Nothing is sent."""
        self.client()

    def client(self, limits: Limits | None = None, max_concurrency: int = 8) -> PrometheusClient:
        """A client for the server; BadConnection / BadCredentials (one line) when unusable."""
        headers = dict(self.headers)
        # every place a credential can come from, named as a person wrote it: one at most
        given: list[str] = []
        token = self.bearer_token.get_secret_value() if self.bearer_token else None
        if token is not None:
            given.append("a bearer token")
        basic: tuple[str, str] | None = None
        if self.basic_auth is not None:
            given.append("basic auth")
            user, sep, password = self.basic_auth.get_secret_value().partition(":")
            if not sep:
                raise BadCredentials("--basic-auth must be USER:PASSWORD")
            basic = (user, password)
        ca, insecure, cert = self.ca_file, self.insecure, None
        try:
            if self.bearer_token_file is not None:
                given.append("a bearer token file")
                token = read_secret_file(self.bearer_token_file, "--bearer-token-file")
            if self.http_config_file is not None:
                cfg = read_http_config(self.http_config_file)
                if cfg.bearer_token or cfg.basic_auth:
                    given.append("the HTTP config file")
                token = token or cfg.bearer_token
                basic = basic or cfg.basic_auth
                ca = ca or cfg.ca_file
                insecure = insecure or cfg.insecure
                cert = cfg.client_cert
                headers = {**cfg.headers, **headers}
        except HTTPConfigError as exc:
            raise BadConnection(str(exc)) from None
        _one_place(given)
        if self.tenant is not None:
            headers[TENANT_HEADER] = self.tenant
        return PrometheusClient(
            self.url,
            timeout=self.timeout,
            deadline=self.deadline,
            bearer_token=token,
            basic_auth=basic,
            ca_file=ca,
            insecure=insecure,
            client_cert=cert,
            headers=headers,
            max_concurrency=max_concurrency,
            limits=limits,
        )


def _one_place(given: list[str]) -> None:
    if len(given) > 1:
        raise BadCredentials(
            f"credentials given in {len(given)} places ({', '.join(given)}); give them in one "
            "place: a request can carry only one of them"
        )
