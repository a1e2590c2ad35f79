"""One redaction layer: credentials never reach a terminal, a log, a bundle or a report.

Everything that prints, logs or stores a URL or an error passes it through here:

    redact_url("http://user:pass@host:9090/?token=x")  → "http://***@host:9090/?token=***"
    redact_text("... Authorization: Bearer abc ...")    → "... Authorization: Bearer *** ..."
    Redactor(secrets).scrub(text)   also removes the known secrets themselves (a token, a
                                    password, their URL- and base64-encoded forms) wherever
                                    they appear, e.g. echoed back in a server's error text.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Iterable
from urllib.parse import quote, unquote

MASK = "***"
#: query parameters whose values are credentials by name
_SECRET_PARAM = re.compile(
    r"(?i)([?&;](?:[a-z0-9_.-]*(?:token|secret|password|passwd|pwd|key|auth|signature|sig)"
    r"[a-z0-9_.-]*)=)[^&#\s]*"
)
#: scheme://userinfo@ anywhere in a text (up to the last @ before the path:
#: people type an unencoded @ in passwords)
_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/\s?#]*@")
#: "Authorization: xyz", "token=xyz", "password: xyz" in free text
_AUTH_FIELDS = re.compile(
    r"(?i)\b(authorization|x-api-key|api[_-]?key|password|passwd|token|secret)"
    r"(\s*[:=]\s*)(?:(?:bearer|basic)\s+)?[^\s,;'\"]+"
)
#: "Bearer xyz", "Basic xyz": an HTTP auth scheme followed by its credential
_AUTH_SCHEME = re.compile(r"\b(Bearer|Basic)(\s+)[A-Za-z0-9._~+/=-]{8,}")
#: shorter known secrets are scrubbed only where they stand as credentials (the patterns above):
#: replacing a one-letter password everywhere would blank every word that holds that letter
MIN_SCRUB_LEN = 4


def redact_url(url: str) -> str:
    """The URL with its userinfo and credential-like query values masked."""
    return _SECRET_PARAM.sub(rf"\1{MASK}", _USERINFO.sub(rf"\1{MASK}@", url))


def redact_text(text: str) -> str:
    """Free text (an error, a log line) with URL userinfo and credential phrases masked."""
    text = _USERINFO.sub(rf"\1{MASK}@", text)
    text = _SECRET_PARAM.sub(rf"\1{MASK}", text)
    text = _AUTH_FIELDS.sub(rf"\1\2{MASK}", text)
    return _AUTH_SCHEME.sub(rf"\1\2{MASK}", text)


def userinfo(url: str) -> tuple[str, str] | None:
    """(user, password) of `scheme://user:password@host/...`, percent-decoded; None when absent."""
    m = re.match(r"(?i)[a-z][a-z0-9+.-]*://([^/\s?#]*)@", url)
    if m is None:
        return None
    user, _, password = m.group(1).partition(":")
    return unquote(user), unquote(password)


def strip_userinfo(url: str) -> str:
    """The URL without its `user:password@` part."""
    return _USERINFO.sub(r"\1", url, count=1)


def _forms(secret: str) -> set[str]:
    """A secret as it may appear in text: as is, percent-encoded, JSON/repr-escaped."""
    forms = {secret, quote(secret, safe=""), quote(secret)}
    forms.add(secret.encode("unicode_escape").decode("ascii"))
    forms.add(repr(secret)[1:-1])
    return {f for f in forms if f}


class Redactor:
    """Scrubs known secrets (and the patterns of `redact_text`) from any text."""

    def __init__(self, secrets: Iterable[str | None] = ()) -> None:
        found: set[str] = set()
        for s in secrets:
            if s and len(s) >= MIN_SCRUB_LEN:
                found |= _forms(s)
        self._secrets = sorted(found, key=len, reverse=True)

    @classmethod
    def for_connection(
        cls,
        url: str,
        bearer_token: str | None = None,
        basic_auth: tuple[str, str] | None = None,
        others: Iterable[str] = (),
    ) -> Redactor:
        secrets: list[str | None] = [bearer_token, *others]
        creds = [c for c in (userinfo(url), basic_auth) if c is not None]
        for user, password in creds:
            secrets.append(password)
            pair = f"{user}:{password}".encode()
            secrets.append(base64.b64encode(pair).decode())
        return cls(secrets)

    def scrub(self, text: str) -> str:
        for s in self._secrets:
            if s in text:
                text = text.replace(s, MASK)
        return redact_text(text)
