"""The API's container CPU limit: `lab up` runs the API under a cgroup CFS quota, as a pod's
`resources.limits.cpu` would, so the kernel counts its scheduler periods from the start and a
cut limit (`api-cpu-limit`) shows as real throttling in `cgroup_exporter`'s counters.

Where no cgroup can be written here (not root, no cpu controller), the API runs without a limit
and `lab up` says why in one line; the fault then refuses with the same line.
"""

from __future__ import annotations

from pathlib import Path

from infersight.lab.live import cpu_limit

#: the API's limit by default: a whole core, which the lab's load and its capacity sweeps never
#: reach (the API uses 0.03 cores at 6 requests/s), so the kernel counts its periods from the
#: start and holds it in none
API_CPUS = 1.0
#: a limit that binds at the lab's 6 requests/s (`lab up --api-cpus 0.1`), about three times what
#: the API uses: measured here, the kernel held it in 3% of its periods at 0.1 CPU, 39% at 0.05
#: and 73% at 0.025, so halving it throttles
BINDING_CPUS = 0.1
#: what `api-cpu-limit` divides the lab's limit by: halved
CUT = 2.0


def prefix(lab_dir: Path) -> str:
    """The cgroup name prefix of one lab's limited parts (`cgroup_exporter --prefix`)."""
    return f"infersight-{lab_dir.name}-"


def group_name(lab_dir: Path, part: str = "api") -> str:
    return f"{prefix(lab_dir)}{part}"


def place(lab_dir: Path, pid: int, cpus: float = API_CPUS) -> str:
    """Put the API's process in its group under `cpus`; the line saying what was done."""
    try:
        group = cpu_limit.limit(group_name(lab_dir), [pid], cpus)
    except cpu_limit.CpuLimitUnavailable as exc:
        return f"the API runs without a CPU limit: {exc}"
    return f"the API runs under a {cpus:g}-CPU limit (cgroup {group.path})"


def set_limit(lab_dir: Path, pid: int, cpus: float) -> cpu_limit.CpuLimit:
    """The API's limit changed to `cpus` (its group made again if it is gone)."""
    return cpu_limit.limit(group_name(lab_dir), [pid], cpus)


def release(lab_dir: Path) -> None:
    """The API's group removed (its process stopped or moved back to the root)."""
    try:
        root = cpu_limit.controller_root()
    except cpu_limit.CpuLimitUnavailable:
        return
    path = root / group_name(lab_dir)
    if path.is_dir():
        cpu_limit.release(cpu_limit.CpuLimit(path, (root / "cgroup.controllers").exists()))
