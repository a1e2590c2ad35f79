"""Running a step's program to its deadline, whatever the program does.

The program starts in a session of its own; its output is read until it ends or the deadline
passes, then its process group is killed. Reading never waits for the pipes to close: a process
it started that left the group (`setsid`, a daemon) and still holds them would keep them open
for as long as it lives. Output is read for a short drain after the end, then the pipes are
closed, and whoever still held them is named (`left_running`) for the audit record.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Ran:
    """What a program did by the time it was let go."""

    code: int | None  # its exit code; None when it was killed at the deadline
    timed_out: bool
    out: bytes
    err: bytes
    dropped: tuple[int, int] = (0, 0)  # bytes of stdout, stderr read past `keep` and not kept
    left_running: list[str] = field(default_factory=list)  # "pid N (name)" still holding output


def run_program(argv: list[str], timeout: float, keep: int, drain: float) -> Ran:
    """Run `argv` (argv[0] a full path) for at most `timeout` seconds plus `drain`; keep at most
    `keep` bytes of each stream. OSError when it cannot be started."""
    proc = subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,  # a timeout stops the program and whatever it started
    )
    assert proc.stdout is not None and proc.stderr is not None
    out_fd, err_fd = proc.stdout.fileno(), proc.stderr.fileno()
    streams = {out_fd: bytearray(), err_fd: bytearray()}
    dropped = dict.fromkeys(streams, 0)
    inodes = {os.fstat(fd).st_ino for fd in streams}
    sel = selectors.DefaultSelector()
    for fd in streams:
        os.set_blocking(fd, False)
        sel.register(fd, selectors.EVENT_READ)
    deadline = time.monotonic() + timeout
    stop_at = deadline  # moves to the end of the drain once the program ended or was killed
    timed_out = ended = False
    try:
        while True:
            now = time.monotonic()
            if not ended and proc.poll() is not None:
                ended, stop_at = True, min(stop_at, now + drain)
            if not ended and now >= deadline:
                timed_out = ended = True
                _kill_group(proc.pid)
                stop_at = now + drain
            if (ended and not sel.get_map()) or now >= stop_at:
                break
            wait = min(stop_at - now, 0.2)
            if not sel.get_map():  # it closed its output but runs on: wait for it to end
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(wait)
                continue
            for key, _ in sel.select(timeout=wait):
                fd = int(key.fd)
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    sel.unregister(fd)
                    continue
                room = max(0, keep - len(streams[fd]))
                streams[fd] += chunk[:room]
                dropped[fd] += len(chunk) - min(room, len(chunk))
        held = bool(sel.get_map())
    finally:
        sel.close()
        if proc.poll() is None:  # the loop ended by an exception: nothing outlives it
            _kill_group(proc.pid)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(max(drain, 0.1))
    left = _holders(inodes) if held else []
    proc.stdout.close()
    proc.stderr.close()
    if held and not left:
        left = ["a process the step started (it kept the step's output open)"]
    if proc.returncode is None:  # killed, yet not reaped within the drain (stuck in the kernel)
        left.insert(0, f"pid {proc.pid} ({Path(argv[0]).name}), the step's own program")
    return Ran(
        code=None if timed_out else proc.returncode,
        timed_out=timed_out,
        out=bytes(streams[out_fd]),
        err=bytes(streams[err_fd]),
        dropped=(dropped[out_fd], dropped[err_fd]),
        left_running=left,
    )


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def _holders(inodes: set[int]) -> list[str]:
    """Processes other than this one with a descriptor on one of the pipes (Linux /proc)."""
    wanted = {f"pipe:[{i}]" for i in inodes}
    me = os.getpid()
    found: list[str] = []
    try:
        pids = [int(p) for p in os.listdir("/proc") if p.isdigit()]
    except OSError:
        return found
    for pid in sorted(pids):
        if pid == me:
            continue
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
            holds = any(os.readlink(f"/proc/{pid}/fd/{fd}") in wanted for fd in fds)
            if holds:
                name = Path(f"/proc/{pid}/comm").read_text("utf-8", "replace").strip()
                found.append(f"pid {pid} ({name})")
        except OSError:  # gone meanwhile, or not ours to look at
            continue
    return found
