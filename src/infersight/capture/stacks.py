"""Thread stacks of running Python processes, with `py-spy dump` (seed §2.3: the frozen scene).

py-spy reads another process's memory through ptrace. Where that is not permitted (another
user's process, a container without CAP_SYS_PTRACE, Yama ptrace_scope) the part says so in one
line, with what to change, and the rest of the capture goes on.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from infersight.capture.parts import PartOutput
from infersight.redact import redact_text

#: seconds one dump may take; py-spy pauses the process while it reads the stacks
DUMP_TIMEOUT_S = 20.0
PTRACE_HINT = (
    "run capture as the process's user or as root, or grant CAP_SYS_PTRACE "
    "(Kubernetes: securityContext.capabilities.add [SYS_PTRACE]; Docker: --cap-add SYS_PTRACE)"
)


class ProcessNotFound(ValueError):
    """A --process NAME that matches no running process."""


@dataclass(frozen=True)
class Target:
    pid: int
    label: str  # what the user named it by


def py_spy() -> str | None:
    """The py-spy binary: on PATH, or beside this Python (a virtualenv's bin)."""
    found = shutil.which("py-spy")
    if found:
        return found
    beside = Path(sys.executable).parent / "py-spy"
    return str(beside) if beside.is_file() else None


def _cmdline(pid: int) -> list[str]:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return []
    return [a.decode("utf-8", "replace") for a in raw.split(b"\0") if a]


def _comm(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text("utf-8", "replace").strip()
    except OSError:
        return ""


def find_processes(name: str) -> list[int]:
    """PIDs whose command name, or the base name of an argument, is `name` (not this one)."""
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        pid = int(entry)
        args = _cmdline(pid)
        if _comm(pid) == name or any(os.path.basename(a) == name for a in args):
            pids.append(pid)
    return sorted(pids)


def resolve(pids: list[int], names: list[str]) -> tuple[list[Target], list[str]]:
    """Targets for the pids and names given; the problems (one line each) for the rest."""
    targets = [Target(p, f"pid {p}") for p in pids]
    problems = []
    for name in names:
        found = find_processes(name)
        if not found:
            problems.append(f"--process {name}: no running process has that name")
        targets += [Target(p, name) for p in found]
    firsts: dict[int, Target] = {}
    for t in targets:
        firsts.setdefault(t.pid, t)
    unique = list(firsts.values())
    return unique, problems


def _redact_header(stacks: bytes) -> bytes:
    """py-spy's first line is the process's command line, whose flags carry credentials as
    often as not (vLLM's `--api-key`): redacted as a command line, every such value masked."""
    head, sep, rest = stacks.partition(b"\n")
    if head.startswith(b"Process "):
        head = redact_text(head.decode("utf-8", "replace"), command_line=True).encode("utf-8")
    return head + sep + rest


def _denied(text: str) -> bool:
    low = text.lower()
    return "permission denied" in low or "operation not permitted" in low or "eperm" in low


def dump(target: Target, native: bool, timeout_s: float = DUMP_TIMEOUT_S) -> tuple[bytes, str]:
    """(stacks as text, "" ) or (b"", the one-line reason it failed)."""
    binary = py_spy()
    if binary is None:
        return b"", "py-spy not found; install it with `pip install py-spy`"
    if not Path(f"/proc/{target.pid}").exists():
        return b"", f"pid {target.pid}: no such process (exited?)"
    attempts = [["--native"], []] if native else [[]]
    who = f"pid {target.pid}" + (
        "" if target.label == f"pid {target.pid}" else f" ({target.label})"
    )
    why = ""
    for extra in attempts:
        cmd = [binary, "dump", "--pid", str(target.pid), *extra]
        try:
            res = subprocess.run(cmd, capture_output=True, timeout=timeout_s, check=False)
        except subprocess.TimeoutExpired:
            return b"", f"pid {target.pid}: py-spy did not finish within {timeout_s:g} s"
        if res.returncode == 0 and res.stdout.strip():
            return _redact_header(res.stdout), ""
        err = (res.stderr or res.stdout).decode("utf-8", "replace").split("Stack backtrace:")[0]
        if _denied(err):
            return b"", f"{who}: ptrace not permitted, so no thread stacks; {PTRACE_HINT}"
        if "failed to find python version" in err.lower():
            return b"", f"{who}: not a Python process (py-spy found no interpreter in it)"
        why = " ".join(err.split())[:300] or f"py-spy exited with {res.returncode}"
    return b"", f"{who}: py-spy failed: {why}"


def capture_stacks(targets: list[Target], problems: list[str], native: bool) -> PartOutput:
    artifacts: dict[str, bytes] = {}
    notes = list(problems)
    for t in targets:
        text, why = dump(t, native)
        if why:
            notes.append(why)
        else:
            safe = "".join(c if c.isalnum() or c in "._-" else "_" for c in t.label)
            artifacts[f"stacks/{t.pid}-{safe}.txt"] = text
    if not artifacts and notes:
        raise RuntimeError("; ".join(notes))
    done = f"{len(artifacts)} of {len(targets)} processes dumped"
    return PartOutput(artifacts, "; ".join([done, *notes]), partial=bool(notes))
