"""Thread stacks: which processes a name finds, and one clear line for what py-spy cannot dump."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from infersight.capture.stacks import Target, capture_stacks, dump, py_spy, resolve


@pytest.fixture
def sleeper() -> Iterator[subprocess.Popen[bytes]]:
    proc = subprocess.Popen(["sleep", "600"])
    # until the child has exec'd, /proc shows it under the parent's name (python), and a
    # lookup by name right after Popen finds nothing: wait, bounded, for it to be `sleep`
    comm = Path(f"/proc/{proc.pid}/comm")
    deadline = time.monotonic() + 10.0
    while comm.read_text().strip() != "sleep" and time.monotonic() < deadline:
        time.sleep(0.01)
    yield proc
    proc.kill()
    proc.wait()


def test_names_find_processes_and_a_pid_is_dumped_once(
    sleeper: subprocess.Popen[bytes],
) -> None:
    targets, problems = resolve([sleeper.pid], ["sleep", "no-such-process-xyz"])
    assert [t.pid for t in targets].count(sleeper.pid) == 1
    assert targets[0] == Target(sleeper.pid, f"pid {sleeper.pid}")
    assert problems == ["--process no-such-process-xyz: no running process has that name"]
    assert os.getpid() not in [t.pid for t in resolve([], ["python"])[0]]  # never itself


def test_a_process_that_is_not_python_is_one_clear_line(
    sleeper: subprocess.Popen[bytes],
) -> None:
    if py_spy() is None:
        if os.environ.get("CI") == "true":
            pytest.fail("py-spy not installed: pip install -e '.[test]'")
        pytest.skip("py-spy not installed")
    text, why = dump(Target(sleeper.pid, "sleep"), native=True)
    assert text == b""
    assert (
        why
        == f"pid {sleeper.pid} (sleep): not a Python process (py-spy found no interpreter in it)"
    )
    with pytest.raises(RuntimeError) as exc:  # nothing dumped at all: the part failed
        capture_stacks([Target(sleeper.pid, "sleep")], [], native=False)
    assert "not a Python process" in str(exc.value)


def test_a_gone_process_is_noted_and_the_others_dumped() -> None:
    if py_spy() is None:
        if os.environ.get("CI") == "true":
            pytest.fail("py-spy not installed: pip install -e '.[test]'")
        pytest.skip("py-spy not installed")
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    live = subprocess.Popen(
        [sys.executable, "-c", "import time; print('up', flush=True); time.sleep(600)"],
        stdout=subprocess.PIPE,
    )
    try:
        assert live.stdout is not None and live.stdout.readline() == b"up\n"
        out = capture_stacks([Target(gone.pid, "gone"), Target(live.pid, "live")], [], native=False)
    finally:
        live.kill()
        live.wait()
    assert out.partial and list(out.artifacts) == [f"stacks/{live.pid}-live.txt"]
    assert f"pid {gone.pid}: no such process (exited?)" in out.note
    assert f"Thread {live.pid} (idle)".encode() in out.artifacts[f"stacks/{live.pid}-live.txt"]
