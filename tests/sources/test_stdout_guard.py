"""cli/stdout_guard: stdout redirected to /dev/full ends in one line on stderr, not a traceback."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

_PROGRAM = """
import sys
from rich.console import Console
from infersight.cli.stdout_guard import guarded
def command():
    Console().print("x" * 2000)
    print("y" * 200_000)
    sys.exit(0)
guarded(command)
"""


@pytest.mark.slow
@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_stdout_to_dev_full_is_one_line() -> None:
    with open("/dev/full", "w") as full:
        r = subprocess.run(
            [sys.executable, "-c", _PROGRAM], stdout=full, stderr=subprocess.PIPE, text=True
        )
    assert r.returncode == 3  # an input/output error, not findings
    assert "Traceback" not in r.stderr and "Exception ignored" not in r.stderr, r.stderr
    assert r.stderr.strip() == (
        "error: cannot write to standard output (No space left on device); nothing more written"
    )
