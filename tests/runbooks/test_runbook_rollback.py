"""Rollback details on real processes: a rollback step that undoes a change which never
happened (its capture is missing) is skipped, not failed; one that fails does not stop the
next."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from infersight.runbooks import parse_runbook
from infersight.runbooks.audit import AuditLog
from infersight.runbooks.checks import Checker
from infersight.runbooks.executor import Runner
from infersight.runbooks.params import resolve

pytestmark = pytest.mark.slow

APPEND = "import sys; open(sys.argv[1], 'a').write(sys.argv[2])"
BOOK = """\
id: two-changes
title: Two changes, the second fails before its capture
params:
  python: {type: str}
  out: {type: str}
steps:
  - name: first change (reads the old value)
    command: {argv: ["{{python}}", -c, "print('old-1')"]}
    capture: first_old
  - name: second change fails before it reads anything
    command: {argv: ["{{python}}", -c, "import sys; sys.exit(5)"]}
  - name: never runs
    command: {argv: ["{{python}}", -c, "print('old-2')"]}
    capture: second_old
rollback:
  - name: undo the third (never ran)
    command: {argv: ["{{python}}", -c, "APPEND", "{{out}}", "{{second_old}}"]}
  - name: an undo that fails
    command: {argv: ["{{python}}", -c, "import sys; sys.exit(7)"]}
  - name: undo the first
    command: {argv: ["{{python}}", -c, "APPEND", "{{out}}", "{{first_old}}"]}
""".replace("APPEND", APPEND)


def test_rollback_skips_what_never_ran_and_goes_on_after_a_failure(tmp_path: Path) -> None:
    book = parse_runbook(BOOK, "two-changes.yaml")
    out = tmp_path / "undone.txt"
    values = resolve(book.params, {"python": sys.executable, "out": str(out)}, {}, 256)
    with AuditLog(tmp_path / "audit.jsonl") as log:
        report = Runner(book, values, Checker(None, 1.0)).execute(log)
    assert [s.ok for s in report.steps] == [True, False]
    assert report.outcome == "rollback-failed"  # the undo that exits 7
    assert [r.code for r in report.rollback] == [7, 0]  # the skipped one never ran
    assert out.read_text() == "old-1"  # the first change was undone with what it captured
    records = [json.loads(x) for x in (tmp_path / "audit.jsonl").read_text().splitlines()]
    skipped = [r for r in records if r.get("skipped")]
    assert len(skipped) == 1 and "second_old" in skipped[0]["detail"]
