"""Faults of a real engine (`lab up --engine vllm`), each from the engine's own mechanics:

* a limit changed by redeploying the engine with another setting, as a rollout of a bad value
  would (`LIMITS`): a KV cache cut to 10 blocks (sequences preempted), the running sequences
  capped at one (a waiting queue), an admission limit (vLLM's own 503s);
* its scheduler stopped (SIGSTOP to the engine-core process): the API server still answers
  scrapes and health checks, and no token comes out;
* the prompt template changed by the API (`engine-template-change`): prefix-cache hits fall.

`lab fault clear` undoes each: the engine redeployed with the lab's settings, the scheduler
continued, the template restored.
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

from infersight.lab.engine import ServeLimits, find
from infersight.lab.live.procs import LabError
from infersight.lab.live.stack import Lab, respawn

#: the engine redeployed with these settings (everything else as `lab up` set it)
LIMITS: dict[str, ServeLimits] = {
    # 10 blocks of 128 tokens: one whole sequence at the model's 1024 tokens (vLLM keeps a
    # block back: 8 blocks serve only 896, and it refuses to start) for up to 8 sequences of
    # ~430 and more (the template, the question and passages, the answer):
    # vLLM preempts running sequences to make room (16 blocks gave 4 preemptions in 16
    # concurrent answers of 120 tokens on one engine; a replica behind the gateway gets half of
    # the API's 8 workers)
    "engine-kv-cut": ServeLimits(num_blocks=10),
    # one sequence at a time on every engine: the rest of the API's 8 workers wait in the
    # engines' queues
    "engine-seqs-cap": ServeLimits(max_num_seqs=1),
    # one running, one waiting, on every engine: vLLM answers 503 to the rest of the API's 8
    # workers and counts them
    "engine-admission-limit": ServeLimits(max_num_seqs=1, max_queued=1),
}
#: settings rolled out to every engine, not one replica: on one replica alone the gateway's
#: least-connections balance sends the work to the others, and nothing waits or is refused
FLEET = frozenset({"engine-seqs-cap", "engine-admission-limit"})
#: sends a fault to a part's admin routes (None: clears that part's faults)
Admin = Callable[[str, dict[str, Any] | None], dict[str, Any]]
HANG = "engine-hang"
TEMPLATE = "engine-template-change"
NAMES = (*LIMITS, HANG, TEMPLATE)
#: the engine-core process's title (vLLM sets it as its command line)
ENGINE_CORE = "VLLM::EngineCore"


def _engine_part(lab: Lab, replica: int) -> str:
    if not lab.real_engine:
        raise LabError(
            "engine faults need a real engine: `lab up --engine vllm` (this lab runs the GPU "
            "stand-in)"
        )
    return f"engine-{replica}"


def _targets(lab: Lab, name: str, part: str) -> list[str]:
    """The engines a setting goes to: every one for a fleet-wide rollout, else the replica's."""
    return [f"engine-{i}" for i in range(lab.replicas)] if name in FLEET else [part]


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


def inject(lab: Lab, name: str, replica: int, admin: Admin) -> dict[str, Any]:
    """Do fault `name` on replica `replica`; its parameters (for the ground truth and clear)."""
    part = _engine_part(lab, replica)
    if name in LIMITS:
        engine = find(Path(lab.engine_dir))
        limits = LIMITS[name]
        for one in _targets(lab, name, part):
            port = lab.part(one).port
            try:
                respawn(lab, one, engine.serve_argv(port, limits))
            except LabError as exc:  # the engine refused the setting: put the lab's back
                respawn(lab, one, engine.serve_argv(port, ServeLimits()))
                raise LabError(f"{name}: {one} did not start with it ({exc})") from None
        return {k: v for k, v in limits.__dict__.items() if v is not None}
    if name == HANG:
        leader = Lab.load(lab.dir).part(part).pid  # as recorded now: redeploys change it
        pids = [p for p in _group(leader) if _title(p).startswith(ENGINE_CORE)]
        if not pids:
            raise LabError(f"{part} has no engine-core process ({ENGINE_CORE}) to stop")
        for pid in pids:
            os.kill(pid, signal.SIGSTOP)
        return {"stopped": pids}
    if name == TEMPLATE:
        admin("api", {"name": name, "params": {}})
        return {}
    raise LabError(f"unknown engine fault {name!r}")


def clear(lab: Lab, name: str, replica: int, params: dict[str, Any], admin: Admin) -> None:
    part = _engine_part(lab, replica)
    if name in LIMITS:
        engine = find(Path(lab.engine_dir))
        for one in _targets(lab, name, part):
            respawn(lab, one, engine.serve_argv(lab.part(one).port, ServeLimits()))
    elif name == HANG:
        for pid in params.get("stopped", []):
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(pid), signal.SIGCONT)
    elif name == TEMPLATE:
        admin("api", None)
