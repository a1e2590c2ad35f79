"""A CPU limit on a group of processes, set with the kernel's own CFS quota (a cgroup), as a
container's `resources.limits.cpu` sets it: the processes get `cpus` of CPU time per 100 ms
period and are throttled for the rest of it, however idle the host is.

cgroup v2 (`cpu.max`) where the unified hierarchy has the cpu controller, else cgroup v1's
cpu controller (`cpu.cfs_quota_us`). Both need root, or a delegated subtree; where neither can
be written, `CpuLimitUnavailable` says why in one line.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from pathlib import Path

ROOT = Path("/sys/fs/cgroup")
#: the CFS period a quota is a share of (the kernel's and Kubernetes' default)
PERIOD_US = 100_000


class CpuLimitUnavailable(RuntimeError):
    """No writable cpu controller here; `str()` is the one line to print."""


@dataclass(frozen=True)
class CpuLimit:
    """One limited group: its folder and the cgroup its processes came from."""

    path: Path
    v2: bool

    @property
    def stat(self) -> dict[str, int]:
        """The kernel's `cpu.stat` (nr_periods, nr_throttled, throttled_usec or
        throttled_time in ns on v1)."""
        out: dict[str, int] = {}
        with contextlib.suppress(OSError):
            for line in (self.path / "cpu.stat").read_text().splitlines():
                key, _, value = line.partition(" ")
                with contextlib.suppress(ValueError):
                    out[key] = int(value)
        return out


def _controller() -> tuple[Path, bool]:
    """The cpu controller's root and whether it is v2."""
    for root in (ROOT, ROOT / "unified"):  # pure v2, or v2 beside v1 (hybrid)
        controllers = root / "cgroup.controllers"
        if controllers.is_file() and "cpu" in controllers.read_text().split():
            return root, True
    if (ROOT / "cpu" / "cpu.cfs_quota_us").is_file():
        return ROOT / "cpu", False
    raise CpuLimitUnavailable(
        f"no cgroup cpu controller under {ROOT} (neither cpu.max nor cpu.cfs_quota_us): "
        "a CPU limit needs one"
    )


def controller_root() -> Path:
    """The folder the lab's limited groups are made in (raises CpuLimitUnavailable)."""
    return _controller()[0]


def limit(name: str, pids: list[int], cpus: float) -> CpuLimit:
    """Put `pids` (with their threads) in a new cgroup `name` limited to `cpus` CPUs."""
    if not 0.01 <= cpus <= 256:
        raise ValueError(f"cpus must be 0.01-256, not {cpus}")
    root, v2 = _controller()
    path = root / name
    quota = max(1000, int(cpus * PERIOD_US))
    try:
        if v2 and "cpu" not in (root / "cgroup.subtree_control").read_text().split():
            (root / "cgroup.subtree_control").write_text("+cpu")  # the children get the cpu
        path.mkdir(exist_ok=True)
        if v2:
            (path / "cpu.max").write_text(f"{quota} {PERIOD_US}")
        else:
            (path / "cpu.cfs_period_us").write_text(str(PERIOD_US))
            (path / "cpu.cfs_quota_us").write_text(str(quota))
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                (path / "cgroup.procs").write_text(str(pid))
    except OSError as exc:
        with contextlib.suppress(OSError):
            path.rmdir()
        raise CpuLimitUnavailable(
            f"cannot set a CPU limit in {path} ({exc.strerror or exc}): it needs root or a "
            "delegated cgroup"
        ) from None
    return CpuLimit(path, v2)


def release(group: CpuLimit) -> None:
    """Move the group's processes back to the controller's root and remove the group."""
    procs = group.path / "cgroup.procs"
    with contextlib.suppress(OSError):
        for pid in procs.read_text().split():
            with contextlib.suppress(OSError):
                (group.path.parent / "cgroup.procs").write_text(pid)
    with contextlib.suppress(OSError):
        group.path.rmdir()


def writable() -> str | None:
    """None where a limit can be set here, else why not (one line)."""
    try:
        root, _ = _controller()
    except CpuLimitUnavailable as exc:
        return str(exc)
    return None if os.access(root, os.W_OK) else f"{root} is not writable: a CPU limit needs root"
