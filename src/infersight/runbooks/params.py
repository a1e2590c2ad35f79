"""Typed runbook parameters, and the refusal of values that could do harm.

A value reaches an argv element, a URL, a JSON body or a Redis command, never a shell; still,
every value is checked before anything runs, so that a pasted `; rm -rf /`, a `../../etc`, a
leading `-` read as an option, a megabyte of text or a look-alike Unicode character is refused
with one line instead of travelling on. The rules per type:

- every string: printable ASCII only (no control characters, no Unicode at all: look-alikes,
  right-to-left overrides, full-width semicolons and zero-width spaces all end here), at most
  `max_param_chars`, not starting with `-`, no `..`;
- `str`: letters, digits and `._:/@=+-` (or the parameter's own `pattern`, still under the
  rules above); `name`: a Kubernetes DNS name; `host`: a host name or an IP address; `url`:
  http(s) with a host and no user:password; `int`/`float`: a plain decimal within min/max;
  `bool`: true/false; `choice`: one of `choices`; `secret`: read from an environment variable,
  never from the command line, and masked wherever it is shown.
"""

from __future__ import annotations

import ipaddress
import math
import re
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, model_validator

ParamType = Literal["str", "name", "host", "url", "int", "float", "bool", "choice", "secret"]
Value = str | int | float | bool

_STR = re.compile(r"[A-Za-z0-9._:/@=+-]+")
_NAME = re.compile(r"[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?")
_HOST = re.compile(r"[A-Za-z0-9]([A-Za-z0-9.-]{0,251}[A-Za-z0-9])?")
_INT = re.compile(r"[+-]?[0-9]{1,18}")
_FLOAT = re.compile(r"[+-]?([0-9]{1,15}(\.[0-9]{1,9})?|\.[0-9]{1,9})([eE][+-]?[0-9]{1,3})?")
_URL_CHARS = re.compile(r"[A-Za-z0-9._~:/?#@!&'()*+,;=%-]+")
_BOOLS = {"true": True, "yes": True, "1": True, "false": False, "no": False, "0": False}


class ParamError(ValueError):
    """A parameter value refused; the message is one line naming the parameter."""


def shown(value: str, limit: int = 40) -> str:
    """A refused value as it may be printed: escaped, cut short."""
    text = value.encode("unicode_escape").decode("ascii").replace("'", "\\'")
    return "'" + text[:limit] + ("..." if len(text) > limit else "") + "'"


class Param(BaseModel):
    """One declared parameter."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    type: ParamType = "str"
    description: str = ""
    default: Value | None = None
    #: `min`/`max` bound int and float values
    min: float | None = None
    max: float | None = None
    choices: list[str] = Field(default_factory=list)
    #: a stricter pattern for `str` (a full match); the string rules still apply
    pattern: str | None = None
    #: `secret`: the environment variable that holds it
    env: str | None = None
    #: `secret`: may be unset (then empty: e.g. a Redis without a password)
    optional: bool = False
    #: drills: the fact of the rehearsal target (see `drill.TARGET_FACTS`) that fills it
    target: str | None = None

    @model_validator(mode="after")
    def _consistent(self) -> Param:
        if self.type == "choice" and not self.choices:
            raise ValueError("a choice parameter lists its choices")
        if self.type != "choice" and self.choices:
            raise ValueError("choices: only for type choice")
        if self.type == "secret":
            if not self.env or not re.fullmatch(r"[A-Z_][A-Z0-9_]*", self.env):
                raise ValueError("a secret names its environment variable in env: (UPPER_CASE)")
            if self.default is not None:
                raise ValueError("a secret has no default: it comes from its env variable")
        elif self.env:
            raise ValueError("env: only for type secret")
        if self.pattern is not None:
            if self.type != "str":
                raise ValueError("pattern: only for type str")
            try:
                re.compile(self.pattern)
            except re.error as exc:
                raise ValueError(f"pattern is not a regular expression: {exc}") from None
        if self.min is not None and self.max is not None and self.min > self.max:
            raise ValueError("min is above max")
        return self


def string_refusal(value: str, max_chars: int) -> str | None:
    """Why a text value is refused, or None."""
    if len(value) > max_chars:
        return f"longer than {max_chars} characters ({len(value)})"
    bad = [c for c in value if not (0x21 <= ord(c) <= 0x7E)]
    if bad:
        kind = "a control character or space" if all(ord(c) < 0x80 for c in bad) else "non-ASCII"
        return f"holds {kind} ({shown(bad[0])}); only printable ASCII is accepted"
    if value.startswith("-"):
        return "starts with '-' (it would read as a command option)"
    if ".." in value:
        return "holds '..' (a path traversal)"
    return None


def _number(name: str, p: Param, value: str) -> int | float:
    pattern, conv = (_INT, int) if p.type == "int" else (_FLOAT, float)
    if not pattern.fullmatch(value):
        raise ParamError(f"--param {name}={shown(value)}: not a plain decimal {p.type}")
    number: int | float = conv(value)
    if not math.isfinite(number):
        raise ParamError(f"--param {name}={shown(value)}: not a finite number")
    if p.min is not None and number < p.min:
        raise ParamError(f"--param {name}={number}: below the minimum {p.min:g}")
    if p.max is not None and number > p.max:
        raise ParamError(f"--param {name}={number}: above the maximum {p.max:g}")
    return number


def _url(name: str, value: str) -> str:
    if not _URL_CHARS.fullmatch(value):
        raise ParamError(f"--param {name}={shown(value)}: characters a URL does not hold")
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ParamError(f"--param {name}={shown(value)}: not an http(s) URL with a host")
    if "@" in parts.netloc:
        raise ParamError(
            f"--param {name}: a URL with user:password; give the credential as a secret"
        )
    return value


def coerce(name: str, p: Param, raw: Value, max_chars: int) -> Value:
    """The typed value of `raw` for parameter `name`, or ParamError (one line)."""
    if isinstance(raw, bool) and p.type == "bool":
        return raw
    if isinstance(raw, int | float) and not isinstance(raw, bool):
        raw = repr(raw)
    value = str(raw)
    why = string_refusal(value, max_chars)
    if why is not None and p.type != "secret":
        raise ParamError(f"--param {name}: refused: {why}")
    if value == "" and p.type in ("str", "secret"):
        return value  # an empty text is harmless: an unset option, the current context
    if p.type in ("int", "float"):
        return _number(name, p, value)
    if p.type == "bool":
        if value.lower() not in _BOOLS:
            raise ParamError(f"--param {name}={shown(value)}: give true or false")
        return _BOOLS[value.lower()]
    if p.type == "choice":
        if value not in p.choices:
            raise ParamError(f"--param {name}={shown(value)}: choose one of {', '.join(p.choices)}")
        return value
    if p.type == "name":
        if len(value) > 253 or not _NAME.fullmatch(value):
            raise ParamError(
                f"--param {name}={shown(value)}: not a Kubernetes name (lower-case letters, "
                "digits, '-' and '.')"
            )
        return value
    if p.type == "host":
        try:
            return str(ipaddress.ip_address(value))
        except ValueError:
            pass
        if not _HOST.fullmatch(value):
            raise ParamError(f"--param {name}={shown(value)}: not a host name or an IP address")
        return value
    if p.type == "url":
        return _url(name, value)
    if p.type == "secret":
        if len(value) > max_chars or any(ord(c) < 0x20 or ord(c) == 0x7F for c in value):
            raise ParamError(
                f"--param {name}: the secret in ${p.env} is too long or holds a control character"
            )
        return value
    pattern = re.compile(p.pattern) if p.pattern else _STR
    if not pattern.fullmatch(value):
        rule = f"the pattern {p.pattern}" if p.pattern else "letters, digits and ._:/@=+-"
        raise ParamError(f"--param {name}={shown(value)}: refused: only {rule}")
    return value


def parse_assignments(items: list[str]) -> dict[str, str]:
    """`k=v` strings from the command line → a dict; a malformed or repeated one is refused."""
    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not re.fullmatch(r"[a-z_][a-z0-9_]{0,63}", key):
            raise ParamError(f"--param {shown(item)}: give NAME=VALUE with a lower-case name")
        if key in out:
            raise ParamError(f"--param {key}: given twice")
        out[key] = value
    return out


def resolve(
    declared: dict[str, Param],
    given: dict[str, Any],
    env: dict[str, str],
    max_chars: int,
    missing_secrets_ok: bool = False,
) -> dict[str, Value]:
    """Every declared parameter's typed value: given, else its default (secrets: from `env`).
    Unknown names, a secret on the command line and a missing required value are refused; an
    unset secret too, unless `missing_secrets_ok` (a dry run shows it masked anyway)."""
    unknown = sorted(set(given) - set(declared))
    if unknown:
        known = ", ".join(sorted(declared)) or "none"
        raise ParamError(f"--param {unknown[0]}: this runbook has no such parameter ({known})")
    out: dict[str, Value] = {}
    for name, p in declared.items():
        if p.type == "secret":
            if name in given:
                raise ParamError(
                    f"--param {name}: a secret is never given on the command line; set ${p.env}"
                )
            secret = env.get(p.env or "")
            if secret:
                out[name] = coerce(name, p, secret, max_chars)
            elif p.optional or missing_secrets_ok:
                out[name] = ""
            else:
                raise ParamError(f"--param {name}: a secret; set ${p.env} in the environment")
            continue
        raw = given.get(name, p.default)
        if raw is None:
            raise ParamError(f"--param {name}: required ({p.description or p.type})")
        out[name] = coerce(name, p, raw, max_chars)
    return out
