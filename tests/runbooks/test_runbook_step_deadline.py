"""A step's time limit holds whatever its program does: a process that leaves the group and
keeps the output pipe open does not keep the run waiting, and the audit record says the step
timed out and names what was left running; an audit log that is a FIFO is refused, not waited
on. Each run is a child process with a generous deadline, so a regression fails here instead of
hanging the suite."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow
SRC = Path(__file__).resolve().parents[2] / "src"

ESCAPES = """\
id: escapes
title: A step whose grandchild leaves the process group holding the output
steps:
  - name: start and wait on a process in a session of its own
    command: {argv: [setsid, --wait, sleep, "300"]}
    timeout_s: 2
"""


def _leftover_pids(text: str) -> list[int]:
    return sorted({int(p) for p in re.findall(r"pid (\d+) \(sleep\)", text)})


@pytest.mark.skipif(shutil.which("setsid") is None, reason="needs util-linux setsid")
def test_a_step_that_leaves_the_group_holding_the_pipe_ends_at_its_time_limit(
    tmp_path: Path,
) -> None:
    books = tmp_path / "books"
    books.mkdir()
    (books / "escapes.yaml").write_text(ESCAPES)
    audit = tmp_path / "audit.jsonl"
    cmd = [sys.executable, "-m", "infersight", "runbook", "run", "escapes", "--dir", str(books),
           "--execute", "--yes", "--audit", str(audit), "--format", "json"]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    leftovers: list[int] = []
    try:
        res = subprocess.run(
            cmd, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL, env=env
        )
        records = [json.loads(line) for line in audit.read_text().splitlines()]
        step = next(r for r in records if r["event"] == "step")
        leftovers = _leftover_pids(json.dumps(step))
        assert res.returncode == 1, res.stderr
        assert json.loads(res.stdout)["outcome"] == "failed"
        assert step["ok"] is False and step["detail"].startswith("timed out after 2 s")
        assert "left running: pid" in step["detail"] and "(sleep)" in step["detail"]
        assert len(leftovers) == 1 and step["left_running"] == [f"pid {leftovers[0]} (sleep)"]
        assert [r["event"] for r in records][-1] == "run-end"
    finally:
        for pid in leftovers:  # the test's own sleep, named by the record
            os.kill(pid, signal.SIGKILL)


def test_a_fifo_as_the_audit_log_is_refused_without_waiting(tmp_path: Path) -> None:
    fifo = tmp_path / "audit.jsonl"
    os.mkfifo(fifo)  # opened for writing without O_NONBLOCK, it waits for a reader forever
    code = (
        "import sys; from pathlib import Path; from infersight.runbooks.audit import AuditLog, "
        "AuditError\ntry:\n    AuditLog(Path(sys.argv[1]))\nexcept AuditError as e:\n    print(e)"
    )
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    r = subprocess.run(
        [sys.executable, "-c", code, str(fifo)], capture_output=True, text=True, timeout=30, env=env
    )
    assert r.stdout.strip() == f"audit log {fifo}: not a regular file; give --audit FILE", r.stderr
