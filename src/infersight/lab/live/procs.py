"""Processes the lab started: spawned in their own session, recorded by pid and start time,
stopped by process group. A pid is only ever signalled when its start time still matches the
record, so a pid the kernel has since given to someone else's process is left alone."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

STOP_GRACE_S = 8.0


class LabError(Exception):
    """A lab operation that cannot go on; `str()` is the one line to print."""


def start_time(pid: int) -> int | None:
    """The process's start time in clock ticks since boot (field 22 of /proc/PID/stat)."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # the command name (field 2) may hold spaces and parentheses: split after the last ')'
    fields = raw.rsplit(")", 1)[1].split()
    return int(fields[19])


@dataclass(frozen=True)
class Proc:
    """One process the lab started."""

    name: str
    pid: int
    started: int  # start time in ticks, to recognise the same process later

    def alive(self) -> bool:
        st = start_time(self.pid)
        if st is None or st != self.started:
            return False
        try:
            state = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            return False
        return state != "Z"

    def signal_group(self, sig: int) -> None:
        """Signal the process group (the part and anything it forked) if it is still ours."""
        if not self.alive():
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, sig)

    def to_dict(self) -> dict[str, object]:
        return {"name": self.name, "pid": self.pid, "started": self.started}


def spawn(name: str, argv: Sequence[str], log: Path, cwd: Path) -> Proc:
    """Start `argv` in a new session (its own process group), output appended to `log`."""
    with open(log, "ab") as out:
        try:
            p = subprocess.Popen(
                list(argv),
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                cwd=cwd,
                start_new_session=True,
            )
        except OSError as exc:
            raise LabError(f"cannot start {name} ({argv[0]}): {exc.strerror}") from None
    st = start_time(p.pid)
    # Popen objects are dropped: the lab outlives this command; `reap` collects exit codes
    # of children of this process where it is still their parent.
    return Proc(name, p.pid, st if st is not None else -1)


def reap() -> None:
    """Collect any exited children of this process (no zombies while `lab up` still runs)."""
    with contextlib.suppress(ChildProcessError):
        while True:
            pid, _ = os.waitpid(-1, os.WNOHANG)
            if pid == 0:
                return


def stop(procs: Sequence[Proc], grace: float = STOP_GRACE_S) -> list[str]:
    """SIGTERM every group, wait up to `grace`, SIGKILL what is left; the names still alive."""
    for p in procs:
        p.signal_group(signal.SIGTERM)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        reap()
        if not any(p.alive() for p in procs):
            break
        time.sleep(0.1)
    for p in procs:
        p.signal_group(signal.SIGKILL)
    end = time.monotonic() + 3.0
    while time.monotonic() < end and any(p.alive() for p in procs):
        reap()
        time.sleep(0.05)
    return [p.name for p in procs if p.alive()]


def listening(port: int, host: str = "127.0.0.1") -> bool:
    """Whether something accepts TCP connections on host:port."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.settimeout(0.5)
        return s.connect_ex((host, port)) == 0
