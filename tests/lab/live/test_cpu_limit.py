"""A CPU limit set with the kernel's CFS quota (`engine-cpu-limit`): a busy process put under
it is throttled, by the kernel's own count, and runs free again once released.

Needs a writable cgroup cpu controller (root here); elsewhere it is skipped with the reason,
since that is a property of the machine, not a server the test could start."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from infersight.lab.live import cpu_limit


def _spin() -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", "while True: pass"])


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / 100.0  # utime + stime in clock ticks


def test_a_limited_process_is_throttled_and_freed_on_release() -> None:
    why = cpu_limit.writable()
    if why is not None:
        pytest.skip(why)
    busy = _spin()
    group = None
    try:
        group = cpu_limit.limit(f"infersight-test-{busy.pid}", [busy.pid], cpus=0.1)
        before = _cpu_seconds(busy.pid)
        time.sleep(2.0)
        used = _cpu_seconds(busy.pid) - before
        stat = group.stat
        assert stat["nr_throttled"] > 0, stat
        # at most a tenth of a core, and then some for scheduling slack
        assert used < 0.5, used
        cpu_limit.release(group)
        assert not group.path.exists()
        before = _cpu_seconds(busy.pid)
        time.sleep(1.0)
        assert _cpu_seconds(busy.pid) - before > used / 2  # free again: a core's worth
    finally:
        busy.kill()
        busy.wait()
        if group is not None:
            cpu_limit.release(group)


def test_a_share_of_cpu_out_of_range_is_refused() -> None:
    with pytest.raises(ValueError, match="cpus must be"):
        cpu_limit.limit("infersight-never", [], cpus=0)


def test_no_controller_is_one_line(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(cpu_limit, "ROOT", tmp_path)
    reason = cpu_limit.writable()
    assert reason is not None and "no cgroup cpu controller" in reason and "\n" not in reason
    with pytest.raises(cpu_limit.CpuLimitUnavailable):
        cpu_limit.limit("x", [1], cpus=0.5)
