"""One redaction layer: credentials never reach a terminal, a log, a bundle or a report.

Everything that prints, logs or stores a URL, an error or a command line passes it through here:

    redact_url("http://user:pass@host:9090/?token=x")  → "http://***@host:9090/?token=***"
    redact_text("... Authorization: Bearer abc ...")    → "... Authorization: Bearer *** ..."
    redact_text("python -m vllm --api-key sk-1 -H 'X-Key: v'", command_line=True)
                                                        → "... --api-key *** -H 'X-Key: ***'"
    redact_argv(["infersight", "--bearer-token", "t"])  → ["infersight", "--bearer-token", "***"]
    register("tok-from-a-file")     a secret this process knows (a token file, a config value):
                                    from then on every `Redactor` removes it wherever it appears
    Redactor(secrets).scrub(text)   registers `secrets`, then removes every registered secret
                                    (as is, URL-encoded, escaped, a basic-auth pair's base64)
                                    and the patterns of `redact_text`
    Redactor().scrub_data(obj)      the same on every string of parsed JSON, numbers untouched

A name is a credential's when one of its words (split at `-`, `_`, `.` and camelCase) is
`token`, `password`, `secret`, `auth`, `cookie`, `credentials` and the like, or `key` after `api`,
`access`, `private`...: `--api-key`, `HF_TOKEN`, `"apiKey":`, `X-Auth-Token:`. Names ending in
`file`, `path`, `url`, `type`, `count`... name something else (`--bearer-token-file`,
`token_count`), and `max_tokens` or `--tokenizer` hold no such word. In free text a value after
a space (`--token VALUE`, `password: VALUE`) that is a plain lowercase word is prose ("give
--bearer-token or ..."), not a credential, and is kept; in a command line it is masked.
"""

from __future__ import annotations

import base64
import re
import threading
from collections.abc import Iterable, Sequence
from typing import Any
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
#: `-H 'Name: value'`, `--header Name: value`, `--header=Name: value`: every value is masked,
#: since any header may carry a credential (X-Api-Key, a tenant's signed token)
_HEADER_FLAG = re.compile(
    r"(?<![\w-])(-H|--header)(=|[ \t]+)([\"']?)([!#$%&*+.^_`|~0-9A-Za-z-]+[ \t]*:[ \t]*)"
    r"(?:(?i:bearer|basic)[ \t]+)?[^\s\"']+"
)
#: `name=value`, `name: value`, `"name": "value"`, `--name=value` whose name may be a
#: credential's (the name is judged by `secret_name`)
_FIELD = re.compile(
    r"(?i)(?<![\w.-])(?P<name>[\w.-]*(?:token|passw|pwd|secret|key|auth|credential|cookie"
    r"|passphrase)[\w.-]*)(?P<q1>[\"']?)(?P<sep>[ \t]*[:=][ \t]*)"
    r"(?:(?P<q2>[\"'])(?P<quoted>[^\"'\n]*)(?P=q2)"
    r"|(?P<scheme>(?:bearer|basic)[ \t]+)?(?P<bare>[^\s,;'\"&]+))"
)
#: `--name VALUE`: a flag followed by its value after a space (not another flag)
_FLAG_VALUE = re.compile(
    r"(?<![\w-])(?P<flag>--?[A-Za-z][\w.-]*)(?P<sp>[ \t]+)(?P<q>[\"']?)(?P<value>(?!-)[^\s\"']+)"
)
#: "Bearer xyz", "Basic xyz": an HTTP auth scheme followed by its credential
_AUTH_SCHEME = re.compile(r"\b(Bearer|Basic)(\s+)[A-Za-z0-9._~+/=-]{8,}")
#: words that make a name a credential's
_SECRET_WORDS = frozenset(
    {
        "token", "password", "passwd", "pwd", "secret", "apikey", "auth", "authorization",
        "credential", "credentials", "cookie", "passphrase",
    }
)  # fmt: skip
#: `key` names a credential after one of these (`api_key`, `--access-key`), not alone
#: (`cache_key=user:1` in a log is a cache key)
_KEY_QUALIFIERS = frozenset(
    {"api", "access", "private", "secret", "client", "signing", "master", "encryption", "license"}
)
#: a last word that makes the name something else's: a token's file, a secret's type
_OTHER_TAILS = frozenset(
    {
        "file", "path", "dir", "env", "type", "mode", "url", "count", "len", "length", "size",
        "id", "name", "method", "scheme",
    }
)  # fmt: skip
#: a first word that makes a flag a switch (`--no-auth`, `--disable-auth`): it takes no value
_SWITCHES = frozenset({"no", "disable", "enable", "skip"})
#: shorter known secrets are scrubbed only where they stand as credentials (the patterns above):
#: replacing a one-letter password everywhere would blank every word that holds that letter
MIN_SCRUB_LEN = 4


def _words(name: str) -> list[str]:
    spaced = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", name)
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", spaced)
    return [w for w in re.split(r"[-_.\s]+", spaced.lower()) if w]


def secret_name(name: str) -> bool:
    """Whether a flag, a field or a header named `name` holds a credential."""
    words = _words(name)
    if not words or words[-1] in _OTHER_TAILS or words[0] in _SWITCHES:
        return False
    return any(
        w in _SECRET_WORDS or (w == "key" and i > 0 and words[i - 1] in _KEY_QUALIFIERS)
        for i, w in enumerate(words)
    )


def _prose(value: str) -> bool:
    """A plain lowercase word: what follows a flag's name in a sentence, not a credential."""
    return value.isalpha() and value.islower()


def _field(m: re.Match[str], command_line: bool) -> str:
    if not secret_name(m["name"]):
        return m.group(0)
    head = m["name"] + m["q1"] + m["sep"]
    if m["q2"] is not None:
        return f"{head}{m['q2']}{MASK}{m['q2']}"
    spaced = m["sep"] != m["sep"].strip()
    if not command_line and spaced and not m["scheme"] and _prose(m["bare"]):
        return m.group(0)
    return f"{head}{m['scheme'] or ''}{MASK}"


def _flag(m: re.Match[str], command_line: bool) -> str:
    if not secret_name(m["flag"]) or (not command_line and _prose(m["value"])):
        return m.group(0)
    return f"{m['flag']}{m['sp']}{m['q']}{MASK}"


def redact_url(url: str) -> str:
    """The URL with its userinfo and credential-like query values masked."""
    return _SECRET_PARAM.sub(rf"\1{MASK}", _USERINFO.sub(rf"\1{MASK}@", url))


def redact_text(text: str, *, command_line: bool = False) -> str:
    """Free text (an error, a log line) with URL userinfo and credentials masked: header
    flags' values, `name=value` and `--name value` forms with a credential's name, auth
    schemes. `command_line`: the text is a command line, so a flag's value is masked even
    when it reads as a word."""
    text = _USERINFO.sub(rf"\1{MASK}@", text)
    text = _SECRET_PARAM.sub(rf"\1{MASK}", text)
    text = _HEADER_FLAG.sub(rf"\1\2\3\4{MASK}", text)
    text = _FIELD.sub(lambda m: _field(m, command_line), text)
    text = _FLAG_VALUE.sub(lambda m: _flag(m, command_line), text)
    return _AUTH_SCHEME.sub(rf"\1\2{MASK}", text)


def _header_value(text: str) -> str:
    name, sep, _value = text.partition(":")
    return f"{name}:{' ' if sep else ''}{MASK}" if sep else MASK


def redact_argv(argv: Sequence[str]) -> list[str]:
    """A command line (one argument per item) with every credential masked: the value after
    a credential's flag (`--api-key VALUE`, `--basic-auth U:P`), every header's value
    (`-H 'Name: value'`), `--flag=value` and `key=value` forms, URL userinfo."""
    out: list[str] = []
    expect = ""  # what the previous argument said this one is: "value" or "header"
    for arg in argv:
        if expect == "header":
            out.append(_header_value(arg))
            expect = ""
            continue
        if expect == "value" and not arg.startswith("--"):
            out.append(MASK)
            expect = ""
            continue
        expect = ""
        out.append(_argument(arg))
        if arg in ("-H", "--header"):
            expect = "header"
        elif arg.startswith("-") and "=" not in arg and secret_name(arg):
            expect = "value"
    return out


def _argument(arg: str) -> str:
    if arg.startswith("--header="):
        return "--header=" + _header_value(arg[len("--header=") :])
    if arg.startswith("-H") and len(arg) > 2 and ":" in arg:
        return "-H" + _header_value(arg[2:])
    return redact_text(arg, command_line=True)


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


class _Registry:
    """The secrets this process knows, in every form, longest first (a snapshot per change, so
    a scrub in one thread never sees a half-updated list)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._forms: set[str] = set()
        self.ordered: tuple[str, ...] = ()

    def add(self, secrets: Iterable[str | None]) -> None:
        new: set[str] = set()
        for s in secrets:
            if s and len(s) >= MIN_SCRUB_LEN:
                new |= _forms(s)
        with self._lock:
            if new <= self._forms:
                return
            self._forms |= new
            self.ordered = tuple(sorted(self._forms, key=len, reverse=True))


_REGISTRY = _Registry()


def register(*secrets: str | None) -> None:
    """Secrets this process knows (read from a token file, a config, an option): from now on
    every `Redactor` removes them wherever they appear verbatim."""
    _REGISTRY.add(secrets)


def register_basic_auth(user: str, password: str) -> None:
    """A basic-auth pair: the password and the header's base64 of `user:password`."""
    register(password, base64.b64encode(f"{user}:{password}".encode()).decode())


class Redactor:
    """Scrubs every secret the process knows (and the patterns of `redact_text`) from text."""

    def __init__(self, secrets: Iterable[str | None] = ()) -> None:
        register(*secrets)

    @classmethod
    def for_connection(
        cls,
        url: str,
        bearer_token: str | None = None,
        basic_auth: tuple[str, str] | None = None,
        others: Iterable[str] = (),
    ) -> Redactor:
        for user, password in [c for c in (userinfo(url), basic_auth) if c is not None]:
            register_basic_auth(user, password)
        return cls([bearer_token, *others])

    def scrub_known(self, text: str) -> str:
        """`text` with every registered secret masked (and nothing else: for lines phrased by
        this program, which name flags and fields in prose)."""
        for s in _REGISTRY.ordered:
            if s in text:
                text = text.replace(s, MASK)
        return text

    def scrub(self, text: str) -> str:
        return redact_text(self.scrub_known(text))

    def scrub_data(self, data: Any) -> Any:
        """Parsed JSON (or any nest of dicts, lists and scalars) with every string scrubbed and
        nothing else touched: scrubbing its text instead would mask a numeric secret inside a
        number (a password `1796` in `1796616600.0`) and leave a file no parser reads."""
        if isinstance(data, str):
            return self.scrub(data)
        if isinstance(data, dict):
            return {self.scrub_known(str(k)): self.scrub_data(v) for k, v in data.items()}
        if isinstance(data, list | tuple):
            return [self.scrub_data(v) for v in data]
        return data
