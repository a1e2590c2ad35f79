"""Running one rendered step: an HTTP call, a program, kubectl, a Redis command. Each gives a
`StepResult` with its output, exit code or status and timing; none raises for a failure of
the thing it ran (that is an outcome to log), only for a bug."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from dataclasses import asdict, dataclass
from typing import Any

import httpx

from infersight.runbooks import resp
from infersight.runbooks.model import Command, HttpCall, Kubectl, RedisCall, Step


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

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + f"… ({len(text) - limit} more chars)"


def run_step(step: Step, timeout: float, max_output: int) -> StepResult:
    """Run a rendered step (placeholders already filled)."""
    started, t0 = time.time(), time.monotonic()
    a = step.action
    if isinstance(a, HttpCall):
        ok, detail, code, out, err, cap = _http(a, timeout)
    elif isinstance(a, Command):
        ok, detail, code, out, err, cap = _argv(a.argv, a.expect_exit, timeout)
    elif isinstance(a, Kubectl):
        ok, detail, code, out, err, cap = _argv(a.argv(), [0], timeout)
    else:
        ok, detail, code, out, err, cap = _redis(a, timeout)
    return StepResult(
        name=step.name,
        kind=step.kind,
        what=step.describe(),
        ok=ok,
        detail=detail,
        code=code,
        output=_cut(out, max_output),
        error_output=_cut(err, max_output),
        started=started,
        seconds=round(time.monotonic() - t0, 4),
        captured=cap if step.capture else None,
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


def _argv(argv: list[str], expect: list[int], timeout: float) -> Outcome:
    prog = shutil.which(argv[0])
    if prog is None:
        return False, f"missing binary: {argv[0]} is not installed or not on PATH", None, "", "", ""
    try:
        proc = subprocess.Popen(
            [prog, *argv[1:]],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,  # a timeout stops the program and whatever it started
        )
    except OSError as exc:
        return False, f"cannot start {argv[0]}: {exc.strerror or exc}", None, "", "", ""
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        text = out.decode(errors="replace")
        return False, f"timed out after {timeout:g} s", None, text, err.decode(errors="replace"), ""
    text = out.decode(errors="replace")
    good = proc.returncode in expect
    why = "" if good else f"exit code {proc.returncode}, wanted {expect}"
    return good, why, proc.returncode, text, err.decode(errors="replace"), text.strip()


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
