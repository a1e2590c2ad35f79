"""Running one rendered step: an HTTP call, a program, kubectl, a Redis command. Each gives a
`StepResult` with its output, exit code or status and timing; none raises for a failure of
the thing it ran (that is an outcome to log), only for a bug."""

from __future__ import annotations

import json
import shutil
import time
from dataclasses import asdict, dataclass, field
from typing import Any

import httpx

from infersight.runbooks import resp
from infersight.runbooks.model import Command, HttpCall, Kubectl, RedisCall, Step
from infersight.runbooks.program import run_program


@dataclass(frozen=True)
class StepResult:
    name: str
    kind: str
    what: str  # the step as it ran, one line
    ok: bool
    detail: str  # why it failed, or "" on success
    code: int | None  # exit code or HTTP status; None for Redis and for what never ran
    output: str  # stdout/body/reply, cut to the configured size
    error_output: str  # stderr
    started: float  # epoch seconds
    seconds: float
    captured: str | None = None
    left_running: list[str] = field(default_factory=list)  # processes that outlived the step

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _cut(text: str, limit: int, unread: int = 0) -> str:
    """`text` cut to `limit` characters, saying how much more there was (`unread`: bytes past
    what was kept in memory)."""
    if len(text) <= limit and not unread:
        return text
    more = [f"{len(text) - limit} more chars"] if len(text) > limit else []
    more += [f"{unread} more bytes not kept"] if unread else []
    return text[:limit] + f"… ({' and '.join(more)})"


def run_step(step: Step, timeout: float, max_output: int, drain: float) -> StepResult:
    """Run a rendered step (placeholders already filled). A program's output is read for at
    most `drain` seconds after it ended or was killed at `timeout`."""
    started, t0 = time.time(), time.monotonic()
    a = step.action
    left: list[str] = []
    if isinstance(a, Command | Kubectl):
        argv, expect = (a.argv, a.expect_exit) if isinstance(a, Command) else (a.argv(), [0])
        (ok, detail, code, out, err, cap), left = _argv(argv, expect, timeout, max_output, drain)
    else:
        call = _http if isinstance(a, HttpCall) else _redis
        ok, detail, code, out, err, cap = call(a, timeout)  # type: ignore[arg-type]
        out, err = _cut(out, max_output), _cut(err, max_output)
    return StepResult(
        name=step.name,
        kind=step.kind,
        what=step.describe(),
        ok=ok,
        detail=detail,
        code=code,
        output=out,
        error_output=err,
        started=started,
        seconds=round(time.monotonic() - t0, 4),
        captured=cap if step.capture else None,
        left_running=left,
    )


Outcome = tuple[bool, str, int | None, str, str, str]
_EMPTY_HEADER = {"", "Bearer", "Basic", "Token"}


def _http(a: HttpCall, timeout: float) -> Outcome:
    # an optional secret left unset leaves its header empty (or a bare "Bearer"): not sent
    headers = {k: v.strip() for k, v in a.headers.items() if v.strip() not in _EMPTY_HEADER}
    kwargs: dict[str, Any] = {"headers": headers}
    if a.json_body is not None:
        kwargs["json"] = a.json_body
    elif a.form is not None:
        kwargs["data"] = a.form
    try:
        with httpx.Client(timeout=timeout, trust_env=False, follow_redirects=False) as http:
            r = http.request(a.method, a.url, **kwargs)
    except httpx.HTTPError as exc:
        return False, f"no answer from {a.url}: {type(exc).__name__}: {exc}", None, "", "", ""
    body = r.text
    good = r.status_code in a.expect if a.expect else 200 <= r.status_code < 300
    why = "" if good else f"HTTP {r.status_code}" + (f", wanted {a.expect}" if a.expect else "")
    for header, want in a.expect_headers.items():
        got = r.headers.get(header, "")
        if good and want not in got:
            good, why = False, f"HTTP {r.status_code} with {header}: {got!r}, wanted {want!r} in it"
    if good and a.expect_body is not None and a.expect_body not in body:
        good, why = False, f"HTTP {r.status_code} without {a.expect_body!r} in the answer"
    captured = body.strip()
    if good and a.capture_json:
        try:
            captured = _json_path(json.loads(body), a.capture_json)
        except (ValueError, KeyError, IndexError, TypeError):
            good, why = False, f"the answer has no JSON field {a.capture_json}"
    return good, why, r.status_code, body, "", captured


def _json_path(data: Any, path: str) -> str:
    for part in path.split("."):
        data = data[int(part)] if isinstance(data, list) else data[part]
    if isinstance(data, dict | list):
        raise TypeError("not a single value")
    return "" if data is None else json.dumps(data) if isinstance(data, bool) else str(data)


def _argv(
    argv: list[str], expect: list[int], timeout: float, max_output: int, drain: float
) -> tuple[Outcome, list[str]]:
    """The program's outcome, and what it left running (see `program.run_program`)."""
    prog = shutil.which(argv[0])
    if prog is None:
        why = f"missing binary: {argv[0]} is not installed or not on PATH"
        return (False, why, None, "", "", ""), []
    try:  # 4 bytes a character: what is kept always fills the `max_output` characters shown
        ran = run_program([prog, *argv[1:]], timeout, 4 * max_output, drain)
    except OSError as exc:
        return (False, f"cannot start {argv[0]}: {exc.strerror or exc}", None, "", "", ""), []
    full = ran.out.decode(errors="replace")
    out = _cut(full, max_output, ran.dropped[0])
    err = _cut(ran.err.decode(errors="replace"), max_output, ran.dropped[1])
    left = f"; left running: {', '.join(ran.left_running)}" if ran.left_running else ""
    if ran.timed_out:
        return (False, f"timed out after {timeout:g} s{left}", None, out, err, ""), ran.left_running
    good = ran.code in expect
    why = "" if good else f"exit code {ran.code}, wanted {expect}{left}"
    return (good, why, ran.code, out, err, full.strip()), ran.left_running


def _redis(a: RedisCall, timeout: float) -> Outcome:
    try:
        reply = resp.call(str(a.host), int(a.port), a.command, a.password or "", timeout)
    except resp.RedisReplyError as exc:
        return False, f"Redis answered an error: {exc}", None, "", str(exc), ""
    except (OSError, ValueError) as exc:
        return False, f"no answer from Redis {a.host}:{a.port}: {exc}", None, "", "", ""
    shown = reply if isinstance(reply, str) else json.dumps(reply)
    last = reply[-1] if isinstance(reply, list) and reply else reply
    captured = "" if last is None else str(last)
    if a.expect is not None and str(reply) != a.expect:
        return False, f"Redis answered {shown!r}, wanted {a.expect!r}", None, shown, "", captured
    return True, "", None, shown, "", captured
