"""Running a step's program to its deadline: output read while it runs, what is past the kept
size counted, the group killed at the deadline (the run through the CLI, with a process that
escapes the group: test_runbook_step_deadline.py)."""

from __future__ import annotations

import sys

import pytest

from infersight.runbooks.program import run_program

pytestmark = pytest.mark.slow


def test_a_program_ending_on_time_is_read_whole_and_leaves_nothing() -> None:
    ran = run_program(
        [sys.executable, "-c", "import sys; print('out'); print('err', file=sys.stderr)"],
        timeout=30,
        keep=1000,
        drain=2,
    )
    assert (ran.code, ran.timed_out, ran.out, ran.err) == (0, False, b"out\n", b"err\n")
    assert ran.left_running == [] and ran.dropped == (0, 0)


def test_output_past_what_is_kept_is_counted_not_held() -> None:
    ran = run_program(
        [sys.executable, "-c", "import sys; sys.stdout.write('x' * 100000); sys.exit(3)"],
        timeout=30,
        keep=1000,
        drain=2,
    )
    assert ran.code == 3 and ran.out == b"x" * 1000 and ran.dropped == (99000, 0)


def test_a_program_past_its_deadline_is_killed_with_its_group() -> None:
    ran = run_program(
        ["/bin/sh", "-c", "echo started; sleep 300 & sleep 300"], timeout=1, keep=1000, drain=2
    )
    assert ran.timed_out and ran.code is None and ran.out == b"started\n"
    assert ran.left_running == []  # the background sleep was in the group: killed with it


def test_a_program_that_closes_its_output_is_waited_for_until_its_deadline() -> None:
    quiet = "exec >/dev/null 2>&1; sleep 1; exit 4"
    ran = run_program(["/bin/sh", "-c", quiet], timeout=30, keep=1000, drain=2)
    assert (ran.code, ran.timed_out, ran.left_running) == (4, False, [])
    ran = run_program(["/bin/sh", "-c", "exec >&- 2>&-; sleep 300"], timeout=1, keep=1000, drain=2)
    assert ran.timed_out and ran.code is None and ran.left_running == []
