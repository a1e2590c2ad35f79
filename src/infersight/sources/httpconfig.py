"""The HTTP client configuration file promtool and amtool read (`--http.config.file`).

The format is Prometheus' common `http_config` (prometheus/common, `config/http_config.go`):

    authorization: {type: Bearer, credentials: ..., credentials_file: ...}
    basic_auth: {username: ..., username_file: ..., password: ..., password_file: ...}
    bearer_token: ... | bearer_token_file: ...          (the older spelling)
    tls_config: {ca_file, cert_file, key_file, insecure_skip_verify}
    http_headers: {Name: {values: [...], secrets: [...], files: [...]}}
    follow_redirects, enable_http2                     (accepted; httpx decides)

Relative file names are read from the config file's folder, as Prometheus does. What infersight
cannot honour (oauth2, proxies, sigv4, ...) is refused with one line naming the key, never
silently ignored: a query sent without the credentials it was meant to carry is a surprise.
Errors never quote a secret.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from infersight import userfile
from infersight.redact import register, register_basic_auth

#: a header name: an RFC 9110 token
_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_ACCEPTED = {
    "authorization",
    "basic_auth",
    "bearer_token",
    "bearer_token_file",
    "tls_config",
    "http_headers",
    "follow_redirects",
    "enable_http2",
}
_TLS_KEYS = {"ca_file", "cert_file", "key_file", "insecure_skip_verify"}
#: a credential is a few hundred characters (a JWT a few thousand); a cap keeps a wrong path
#: (a one-line log, a binary) from being sent as one
MAX_SECRET_CHARS = 64 * 1024


class HTTPConfigError(ValueError):
    """An HTTP config file that cannot be used; `str()` is the one line to print."""


@dataclass(frozen=True)
class HTTPSettings:
    """What the file asks for, secrets read from their files."""

    bearer_token: str | None = field(default=None, repr=False)
    basic_auth: tuple[str, str] | None = field(default=None, repr=False)
    ca_file: str | None = None
    client_cert: tuple[str, str] | str | None = None
    insecure: bool = False
    headers: dict[str, str] = field(default_factory=dict, repr=False)


def read_secret_file(path: str | os.PathLike[str], what: str) -> str:
    """The first line of a secret file, stripped (as Prometheus reads credentials files)."""
    p = Path(path)
    try:
        text = userfile.read_text(p, what).strip()
    except userfile.UserFileError as exc:
        raise HTTPConfigError(str(exc)) from None
    if len(text) > MAX_SECRET_CHARS:
        raise HTTPConfigError(f"{what} {p}: over {MAX_SECRET_CHARS} characters; not a credential")
    if not text:
        raise HTTPConfigError(f"{what} {p}: is empty")
    if "\n" in text:
        raise HTTPConfigError(f"{what} {p}: holds more than one line; give the secret alone")
    register(text)  # known from now on: scrubbed wherever it appears (a log, a stack, an error)
    return text


def _mapping(value: Any, where: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
        raise HTTPConfigError(f"{where}: must be a mapping")
    return value


def _str(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value:
        raise HTTPConfigError(f"{where}: must be a non-empty string")
    return value


def _one_of(doc: dict[str, Any], inline: str, file_key: str, where: str, base: Path) -> str | None:
    if inline in doc and file_key in doc:
        raise HTTPConfigError(f"{where}: give {inline} or {file_key}, not both")
    if inline in doc:
        return _str(doc[inline], f"{where}.{inline}")
    if file_key in doc:
        return read_secret_file(base / _str(doc[file_key], f"{where}.{file_key}"), file_key)
    return None


def _headers(doc: dict[str, Any], base: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    for name, spec in _mapping(doc.get("http_headers"), "http_headers").items():
        if not _TOKEN.fullmatch(name):
            raise HTTPConfigError(f"http_headers: {name!r} is not a valid header name")
        if name.lower() in ("authorization", "host", "content-length"):
            raise HTTPConfigError(
                f"http_headers: {name} cannot be set here; use authorization or basic_auth"
            )
        spec = _mapping(spec, f"http_headers.{name}")
        unknown = set(spec) - {"values", "secrets", "files"}
        if unknown:
            raise HTTPConfigError(f"http_headers.{name}: unknown key {sorted(unknown)[0]}")
        values: list[str] = []
        for key in ("values", "secrets", "files"):
            items = spec.get(key) or []
            if not isinstance(items, list):
                raise HTTPConfigError(f"http_headers.{name}.{key}: must be a list")
            for item in items:
                text = _str(item, f"http_headers.{name}.{key}")
                values.append(
                    read_secret_file(base / text, "header file") if key == "files" else text
                )
        if values:
            out[name] = ", ".join(values)
    return out


def parse_http_config(text: str, base: Path = Path(".")) -> HTTPSettings:
    """The settings of one http config document; HTTPConfigError naming the first problem."""
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" at line {mark.line + 1}" if mark is not None else ""
        raise HTTPConfigError(f"not valid YAML{at}") from None
    doc = _mapping(doc, "the file")
    unknown = sorted(set(doc) - _ACCEPTED)
    if unknown:
        raise HTTPConfigError(
            f"{unknown[0]}: not supported by infersight (it reads authorization, basic_auth, "
            "bearer_token(_file), tls_config and http_headers)"
        )
    token = None
    auth = _mapping(doc.get("authorization"), "authorization")
    if auth:
        kind = auth.get("type", "Bearer")
        if not isinstance(kind, str) or kind.lower() != "bearer":
            raise HTTPConfigError("authorization.type: only Bearer is supported")
        token = _one_of(auth, "credentials", "credentials_file", "authorization", base)
    old = _one_of(doc, "bearer_token", "bearer_token_file", "the file", base)
    basic_doc = _mapping(doc.get("basic_auth"), "basic_auth")
    if bool(token) + bool(old) + bool(basic_doc) > 1:
        raise HTTPConfigError("authorization, bearer_token and basic_auth are mutually exclusive")
    basic = None
    if basic_doc:
        user = _one_of(basic_doc, "username", "username_file", "basic_auth", base) or ""
        password = _one_of(basic_doc, "password", "password_file", "basic_auth", base) or ""
        basic = (user, password)
    tls = _mapping(doc.get("tls_config"), "tls_config")
    bad_tls = sorted(set(tls) - _TLS_KEYS)
    if bad_tls:
        raise HTTPConfigError(f"tls_config.{bad_tls[0]}: not supported by infersight")
    ca = str(base / _str(tls["ca_file"], "tls_config.ca_file")) if "ca_file" in tls else None
    cert: tuple[str, str] | None = None
    if "cert_file" in tls or "key_file" in tls:
        if not ("cert_file" in tls and "key_file" in tls):
            raise HTTPConfigError("tls_config: cert_file and key_file go together")
        cert = (
            str(base / _str(tls["cert_file"], "tls_config.cert_file")),
            str(base / _str(tls["key_file"], "tls_config.key_file")),
        )
    insecure = tls.get("insecure_skip_verify", False)
    if not isinstance(insecure, bool):
        raise HTTPConfigError("tls_config.insecure_skip_verify: must be true or false")
    headers = _headers(doc, base)
    register(token, old, *headers.values())
    if basic is not None:
        register_basic_auth(*basic)
    return HTTPSettings(token or old, basic, ca, cert, insecure, headers)


def read_http_config(path: str | os.PathLike[str]) -> HTTPSettings:
    """Read and parse the file at `path`; errors start with the file's name."""
    p = Path(path)
    try:
        text = userfile.read_text(p, "--http.config.file")
    except userfile.UserFileError as exc:
        raise HTTPConfigError(str(exc)) from None
    try:
        return parse_http_config(text, p.parent)
    except HTTPConfigError as exc:
        raise HTTPConfigError(f"--http.config.file {p}: {exc}") from None
