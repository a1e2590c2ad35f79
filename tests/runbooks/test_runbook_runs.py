"""Runbooks run for real against real processes: the test's HTTP target, redis-server with
redis_exporter, and Prometheus scraping both (the session's `rig`). A step that fails half-way
and a verification that never holds both end in a rollback that really restores the target;
the audit log holds every step, survives a kill mid-run and is never rewritten."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from infersight.redact import MASK
from infersight.runbooks import load_library
from infersight.runbooks.audit import AuditLog
from infersight.runbooks.checks import Checker
from infersight.runbooks.executor import Runner
from infersight.runbooks.model import Runbook
from infersight.runbooks.params import resolve

pytestmark = [pytest.mark.server, pytest.mark.slow]

SET_VALUE = """\
id: set-value
title: Set the target's value, verified on Prometheus
params:
  url: {type: url}
  value: {type: int, min: 0, max: 1000}
  offset: {type: int, default: 0}
  within: {type: str, default: 20s}
  token: {type: secret, env: TARGET_TOKEN, optional: true}
preconditions:
  - name: the target is scraped
    promql: up{job="targets"} == 1 and on() drill_setting >= 0
steps:
  - name: read the current value
    http: {method: GET, url: "{{url}}/setting", capture_json: value}
    capture: previous
  - name: set the value
    http:
      url: "{{url}}/setting"
      headers: {Authorization: "Bearer {{token}}"}
      json: {value: "{{value}}"}
verify:
  name: Prometheus sees the new value
  promql: drill_setting == {{value}} + {{offset}}
  within: "{{within}}"
  every: 500ms
rollback:
  - name: restore the value read first
    http: {url: "{{url}}/setting", json: {value: "{{previous}}"}}
"""

HALF_WAY = """\
id: half-way
title: A change, then a command that fails half-way
params:
  url: {type: url}
  python: {type: str}
  marker: {type: str}
steps:
  - name: read the current value
    http: {method: GET, url: "{{url}}/setting", capture_json: value}
    capture: previous
  - name: set the value
    http: {url: "{{url}}/setting", json: {value: 42}}
  - name: a migration that dies half-way
    command:
      argv:
        - "{{python}}"
        - -c
        - "import pathlib,sys; pathlib.Path(sys.argv[1]).write_text('half'); sys.exit(3)"
        - "{{marker}}"
  - name: never reached
    http: {url: "{{url}}/setting", json: {value: 43}}
rollback:
  - name: restore the value
    http: {url: "{{url}}/setting", json: {value: "{{previous}}"}}
  - name: remove what the migration left
    command:
      argv:
        - "{{python}}"
        - -c
        - "import pathlib,sys; pathlib.Path(sys.argv[1]).unlink()"
        - "{{marker}}"
"""


def _book(tmp_path: Path, text: str, rid: str) -> Runbook:
    (tmp_path / f"{rid}.yaml").write_text(text)
    book = load_library([tmp_path]).get(rid)
    assert book is not None
    return book


def _run(book: Runbook, given: dict[str, Any], prometheus: str, audit: Path, env: Any = None):  # type: ignore[no-untyped-def]
    values = resolve(book.params, given, env or {}, 256)
    runner = Runner(book, values, Checker(prometheus, 10.0))
    with AuditLog(audit) as log:
        return runner.execute(log)


def _records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_http_change_verified_on_prometheus_and_audited(rig: Any, tmp_path: Path) -> None:
    rig.set_value(1)
    book = _book(tmp_path, SET_VALUE, "set-value")
    audit = tmp_path / "audit.jsonl"
    secret = "tok-9f8e7d6c5b4a"
    report = _run(
        book, {"url": rig.target_url, "value": "7"}, rig.prometheus, audit,
        {"TARGET_TOKEN": secret},
    )  # fmt: skip
    assert report.outcome == "ok", report.reason
    assert rig.value() == 7.0
    assert report.verify is not None and report.verify.holds
    events = [r["event"] for r in _records(audit)]
    assert events == ["run-start", "precondition", "step", "step", "verify", "run-end"]
    recs = _records(audit)
    step = recs[3]
    assert step["ok"] and step["code"] == 200 and step["seconds"] >= 0 and step["who"]
    # the target echoed the token back: neither the header nor the echo reach the log
    text = audit.read_text()
    assert secret not in text and MASK in text


def test_drill_against_a_url_runs_verifies_and_restores(rig: Any, tmp_path: Path) -> None:
    from infersight.runbooks.drill import drill_one, url_target

    rig.set_value(4)
    book = _book(
        tmp_path,
        SET_VALUE.replace("url: {type: url}", "url: {type: url, target: api_url}"),
        "set-value",
    )
    with AuditLog(tmp_path / "audit.jsonl") as log:
        result = drill_one(
            book, url_target(rig.target_url, rig.prometheus), {"value": "6"}, log, {}
        )
        broken = drill_one(
            book, url_target(rig.target_url + "/moved", rig.prometheus), {"value": "6"}, log, {}
        )
    assert result.verdict == "works", result.reason
    assert rig.value() == 4.0  # changed to 6, verified on Prometheus, restored
    assert result.report is not None and [s.ok for s in result.report.restore] == [True]
    assert broken.verdict == "broken" and "HTTP 404" in broken.reason


def test_verification_that_never_holds_rolls_back(rig: Any, tmp_path: Path) -> None:
    rig.set_value(3)
    book = _book(tmp_path, SET_VALUE, "set-value")
    audit = tmp_path / "audit.jsonl"
    report = _run(
        book, {"url": rig.target_url, "value": "9", "offset": "1000", "within": "3s"},
        rig.prometheus, audit,
    )  # fmt: skip
    assert report.outcome == "rolled-back"
    assert "did not hold within 3 s" in report.reason
    assert report.verify_tries >= 3  # it kept checking until the deadline
    assert [s.ok for s in report.rollback] == [True]
    assert rig.value() == 3.0  # the rollback really restored the value read first
    assert _records(audit)[-2]["event"] == "rollback"


def test_command_failing_half_way_runs_the_rollback(rig: Any, tmp_path: Path) -> None:
    rig.set_value(5)
    book = _book(tmp_path, HALF_WAY, "half-way")
    marker = tmp_path / "migration.marker"
    audit = tmp_path / "audit.jsonl"
    given = {"url": rig.target_url, "python": sys.executable, "marker": str(marker)}
    report = _run(book, given, rig.prometheus, audit)
    assert report.outcome == "rolled-back"
    assert [s.ok for s in report.steps] == [True, True, False]  # the fourth never ran
    failed = report.steps[-1]
    assert failed.code == 3 and "exit code 3" in failed.detail
    assert [s.ok for s in report.rollback] == [True, True]
    assert rig.value() == 5.0 and not marker.exists()
    phases = [(r["event"], r.get("index")) for r in _records(audit)]
    assert ("rollback", 2) in phases and ("step", 4) not in phases


def test_starter_cache_resize_against_real_redis(rig: Any, tmp_path: Path) -> None:
    book = load_library().get("cache-resize")
    assert book is not None
    given = {"port": str(rig.redis_port), "maxmemory_mb": "96", "redis_job": "targets"}
    report = _run(book, given, rig.prometheus, tmp_path / "audit.jsonl")
    assert report.outcome == "ok", report.reason
    from infersight.runbooks import resp

    assert resp.call("127.0.0.1", rig.redis_port, ["CONFIG", "GET", "maxmemory"]) == [
        "maxmemory",
        str(96 * 1048576),
    ]
    # a verification that cannot hold (the exporter is asked about another job): rolled back
    # to the 96 MiB read first
    given = {"port": str(rig.redis_port), "maxmemory_mb": "128", "redis_job": "nosuch"}
    report = _run(book, given, rig.prometheus, tmp_path / "audit.jsonl")
    assert report.outcome == "refused"  # the precondition on job "nosuch" fails first
    assert resp.call("127.0.0.1", rig.redis_port, ["CONFIG", "GET", "maxmemory"])[1] == str(
        96 * 1048576
    )


def _cli(*args: str, env: dict[str, str] | None = None, **kw: Any) -> subprocess.Popen[str]:
    full_env = {**os.environ, "PYTHONPATH": "src", **(env or {})}
    return subprocess.Popen(
        [sys.executable, "-m", "infersight", "runbook", *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=full_env,
        cwd=Path(__file__).resolve().parents[2], **kw,
    )  # fmt: skip


SLOW = """\
id: slow-one
title: A change, then a long step
params:
  url: {type: url}
  python: {type: str}
steps:
  - name: set the value
    http: {url: "{{url}}/setting", json: {value: 11}}
  - name: a long step
    command: {argv: ["{{python}}", -c, "import time; time.sleep(60)"]}
    timeout_s: 120
"""


QUICK = """\
id: quick-one
title: One change
params:
  url: {type: url}
steps:
  - name: set the value
    http: {url: "{{url}}/setting", json: {value: 12}}
"""


def test_audit_log_survives_a_kill_and_is_never_rewritten(rig: Any, tmp_path: Path) -> None:
    books = tmp_path / "books"
    books.mkdir()
    (books / "slow-one.yaml").write_text(SLOW)
    audit = tmp_path / "audit.jsonl"
    audit.write_text('{"event": "earlier"}\n')  # what was there stays byte for byte
    before = audit.read_bytes()
    params = ["-P", f"url={rig.target_url}", "-P", f"python={sys.executable}"]
    proc = _cli(
        "run", "slow-one", "--dir", str(books), *params, "--execute", "--yes",
        "--audit", str(audit), start_new_session=True,
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if any(r.get("event") == "step" for r in _records(audit)):
            break
        time.sleep(0.1)
    else:
        proc.kill()
        pytest.fail(f"no step record: {proc.communicate()}")
    os.killpg(proc.pid, signal.SIGKILL)  # the CLI and its long step, mid-run
    proc.wait(10)
    data = audit.read_bytes()
    assert data.startswith(before) and data.endswith(b"\n")
    events = [r["event"] for r in _records(audit)]  # every line whole, parseable JSON
    assert events == ["earlier", "run-start", "step"]
    size = len(data)
    # a second run appends; nothing before it changes
    (books / "quick-one.yaml").write_text(QUICK)
    again = _cli(
        "run", "quick-one", "--dir", str(books), "-P", f"url={rig.target_url}", "--execute",
        "--yes", "--audit", str(audit),
    )  # fmt: skip
    _out, err = again.communicate(timeout=60)
    assert again.returncode == 0, err
    after = audit.read_bytes()
    assert after[:size] == data and len(after) > size
    assert [r["event"] for r in _records(audit)][3:] == ["run-start", "step", "run-end"]


def test_injected_parameter_is_refused_before_anything_runs(rig: Any, tmp_path: Path) -> None:
    books = tmp_path / "books"
    books.mkdir()
    (books / "half-way.yaml").write_text(HALF_WAY)
    rig.set_value(8)
    audit = tmp_path / "audit.jsonl"
    for evil in ("/tmp/x;touch /tmp/pwned", "../../../../etc/passwd", "x" * 100_000,
                 "m\u2044arker", "$(touch /tmp/pwned)"):  # fmt: skip
        proc = _cli(
            "run", "half-way", "--dir", str(books), "-P", f"url={rig.target_url}",
            "-P", f"python={sys.executable}", "-P", f"marker={evil}", "--execute", "--yes",
            "--audit", str(audit),
        )  # fmt: skip
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 2, (out, err)
        lines = [ln for ln in err.splitlines() if ln.strip()]
        assert len(lines) == 1 and "--param marker" in lines[0], err
    assert rig.value() == 8.0 and not audit.exists()  # nothing ran, nothing was logged


def test_a_dry_run_whose_precondition_fails_exits_1_and_changes_nothing(
    rig: Any, tmp_path: Path
) -> None:
    books = tmp_path / "books"
    books.mkdir()
    (books / "set-value.yaml").write_text(SET_VALUE)
    rig.set_value(8)
    base = ["run", "set-value", "--dir", str(books), "-P", f"url={rig.target_url}", "-P", "value=9"]
    holds = _cli(*base, "-p", rig.prometheus)
    out, err = holds.communicate(timeout=60)
    assert holds.returncode == 0 and "precondition the target is scraped: holds" in out, err
    unmet = SET_VALUE.replace('up{job="targets"}', 'up{job="no-such-job"}')
    (books / "set-value.yaml").write_text(unmet)
    fails = _cli(*base, "-p", rig.prometheus)
    out, err = fails.communicate(timeout=60)
    assert fails.returncode == 1, (out, err)
    assert "precondition the target is scraped: fails (no series (empty answer))" in out
    assert "a real run would be refused: precondition 'the target is scraped' fails" in out
    assert rig.value() == 8.0  # a dry run, refused or not, changes nothing
