"""Faults of a real engine (`lab up --engine vllm`), each from the engine's own mechanics:

* a limit changed by redeploying the engine with another setting, as a rollout of a bad value
  would (`LIMITS`): the running sequences capped at one (a waiting queue), an admission limit
  (vLLM's own 503s);
* longer requests against the lab's small KV cache (`engine-kv-pressure`, from the API:
  passages quoted at length, answers to 256 tokens): vLLM preempts running sequences;
* a restart with a real model load and a cold compile cache (`engine-restart`): the replica
  is out of rotation while it loads, and the survivors take its share;
* its scheduler stopped (SIGSTOP to the engine-core process): the API server still answers
  scrapes and health checks, and no token comes out;
* a CPU limit on the engine's processes (`engine-cpu-limit`, a cgroup's CFS quota, as a
  container limit): the same work takes it several times longer on an idle host;
* the prompt template changed by the API (`engine-template-change`): prefix-cache hits fall.

`lab fault clear` undoes each: the engine redeployed with the lab's settings, the restarted
one waited for, the scheduler continued, the limit lifted, the API's requests restored.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import shutil
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

from infersight.lab.engine import ServeLimits, find
from infersight.lab.live import cpu_limit
from infersight.lab.live.parts import engine_cache
from infersight.lab.live.procs import LabError
from infersight.lab.live.stack import Lab, respawn, wait_ready

#: the engine redeployed with these settings (everything else as `lab up` set it)
LIMITS: dict[str, ServeLimits] = {
    # one sequence at a time on every engine: the rest of the API's 8 workers wait in the
    # engines' queues
    "engine-seqs-cap": ServeLimits(max_num_seqs=1),
    # one running, one waiting, on every engine: vLLM answers 503 to the rest of the API's 8
    # workers and counts them
    "engine-admission-limit": ServeLimits(max_num_seqs=1, max_queued=1),
}
#: sends a fault to a part's admin routes (None: clears that part's faults)
Admin = Callable[[str, dict[str, Any] | None], dict[str, Any]]
HANG = "engine-hang"
RESTART = "engine-restart"
CPU_LIMIT = "engine-cpu-limit"
#: faults the API makes, by changing the requests it sends
API_SIDE = ("engine-kv-pressure", "engine-template-change")
NAMES = (*LIMITS, *API_SIDE, RESTART, HANG, CPU_LIMIT)
#: the engine's share of CPU under `engine-cpu-limit`: a tenth of a core (in the lab, decoding
#: went from 2.4 ms to 114 ms a token under it)
LIMITED_CPUS = 0.1
#: the engine-core process's title (vLLM sets it as its command line)
ENGINE_CORE = "VLLM::EngineCore"


def _engine_part(lab: Lab, replica: int) -> str:
    if not lab.real_engine:
        raise LabError(
            "engine faults need a real engine: `lab up --engine vllm` (this lab runs the GPU "
            "stand-in)"
        )
    return f"engine-{replica}"


def _group(pgid: int) -> list[int]:
    """The processes of one process group (an engine and what it forked)."""
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, ValueError, IndexError):
            fields = stat.read_text().rsplit(")", 1)[1].split()
            if int(fields[2]) == pgid:
                out.append(int(stat.parent.name))
    return out


def _title(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0].decode(errors="replace")
    except OSError:
        return ""


def _redeploy(lab: Lab, name: str, limits: ServeLimits) -> None:
    """Every engine restarted with `limits` (its own compile cache), one after another: a
    setting on one replica alone does nothing, since the gateway's least-connections balance
    sends the work to the others and nothing waits or is refused."""
    engine = find(Path(lab.engine_dir))
    for i in range(lab.replicas):
        one = f"engine-{i}"
        argv = engine.serve_argv(lab.part(one).port, limits, engine_cache(lab.dir, one))
        try:
            respawn(lab, one, argv)
        except LabError as exc:  # the engine refused the setting: put the lab's back
            lab_argv = engine.serve_argv(
                lab.part(one).port, ServeLimits(), engine_cache(lab.dir, one)
            )
            respawn(lab, one, lab_argv)
            raise LabError(f"{name}: {one} did not start with it ({exc})") from None


def _processes(lab: Lab, part: str) -> list[int]:
    """The engine's processes as recorded now (redeploys change them): the API server and
    the engine core it forked."""
    return _group(Lab.load(lab.dir).part(part).pid)


def inject(lab: Lab, name: str, replica: int, admin: Admin) -> dict[str, Any]:
    """Do fault `name` on replica `replica`; its parameters (for the ground truth and clear)."""
    part = _engine_part(lab, replica)
    if name in LIMITS:
        limits = LIMITS[name]
        _redeploy(lab, name, limits)
        return {k: v for k, v in limits.__dict__.items() if v != getattr(ServeLimits(), k)}
    if name in API_SIDE:
        admin("api", {"name": name, "params": {}})
        return {}
    if name == RESTART:
        # a restart as a rollout or an eviction makes it: SIGTERM, then the model loaded
        # again, compiled this time, from an emptied cache; the fault is the time out of
        # rotation, so it does not wait for the engine
        engine = find(Path(lab.engine_dir))
        cache = engine_cache(lab.dir, part)
        shutil.rmtree(cache, ignore_errors=True)
        limits = dataclasses.replace(ServeLimits(), compiled=True)
        respawn(lab, part, engine.serve_argv(lab.part(part).port, limits, cache), wait=False)
        return {"compiled": True, "cache": "emptied"}
    if name == HANG:
        pids = [p for p in _processes(lab, part) if _title(p).startswith(ENGINE_CORE)]
        if not pids:
            raise LabError(f"{part} has no engine-core process ({ENGINE_CORE}) to stop")
        for pid in pids:
            os.kill(pid, signal.SIGSTOP)
        return {"stopped": pids}
    if name == CPU_LIMIT:
        try:
            group = cpu_limit.limit(
                f"infersight-{lab.dir.name}-{part}", _processes(lab, part), LIMITED_CPUS
            )
        except cpu_limit.CpuLimitUnavailable as exc:
            raise LabError(f"{name}: {exc}") from None
        return {"cpus": LIMITED_CPUS, "cgroup": str(group.path), "v2": group.v2}
    raise LabError(f"unknown engine fault {name!r}")


def clear(lab: Lab, name: str, replica: int, params: dict[str, Any], admin: Admin) -> None:
    part = _engine_part(lab, replica)
    if name in LIMITS:
        _redeploy(lab, name, ServeLimits())
    elif name in API_SIDE:
        admin("api", None)
    elif name == RESTART:
        wait_ready(lab, part)
    elif name == HANG:
        for pid in params.get("stopped", []):
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(pid), signal.SIGCONT)
    elif name == CPU_LIMIT and params.get("cgroup"):
        cpu_limit.release(cpu_limit.CpuLimit(Path(params["cgroup"]), bool(params.get("v2"))))
