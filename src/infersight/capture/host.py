"""Facts about the machine the capture ran on: name, kernel, CPUs, load, memory, disks, clock."""

from __future__ import annotations

import contextlib
import json
import os
import platform
import shutil
import socket
import time
from pathlib import Path
from typing import Any

from infersight.capture.parts import PartOutput


def _meminfo() -> dict[str, int]:
    out: dict[str, int] = {}
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            key, _, rest = line.partition(":")
            parts = rest.split()
            if key in ("MemTotal", "MemAvailable", "SwapTotal", "SwapFree", "Dirty") and parts:
                out[key + "_bytes"] = int(parts[0]) * 1024
    except (OSError, ValueError):
        pass
    return out


def host_facts(paths: list[Path] | None = None) -> dict[str, Any]:
    facts: dict[str, Any] = {
        "hostname": socket.gethostname(),
        "kernel": platform.release(),
        "os": platform.platform(),
        "cpus": os.cpu_count(),
        "time_unix": time.time(),
    }
    with contextlib.suppress(OSError):
        facts["loadavg"] = list(os.getloadavg())
    with contextlib.suppress(OSError, ValueError, IndexError):
        facts["uptime_s"] = float(Path("/proc/uptime").read_text().split()[0])
    facts["memory"] = _meminfo()
    disks = {}
    for p in {Path("/"), *(q.parent for q in paths or [])}:
        try:
            u = shutil.disk_usage(p)
            disks[str(p)] = {"total_bytes": u.total, "free_bytes": u.free}
        except OSError:
            continue
    facts["disks"] = disks
    return facts


def capture_host(paths: list[Path] | None = None) -> PartOutput:
    facts = host_facts(paths)
    data = json.dumps(facts, indent=2, sort_keys=True).encode()
    return PartOutput({"host.json": data}, f"{facts['hostname']}, {facts['cpus']} CPUs")
