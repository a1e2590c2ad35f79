"""`lab fault NAME` / `lab fault clear`: faults injected into the running lab, each with its
ground truth (what, where, when, what a diagnosis should name) appended to
`DIR/faults/truth.jsonl`; the faults still active are in `DIR/faults/active.json`.

Real faults change real software: the API's worker pool, Redis's maxmemory, a killed process,
a CPU hog (stress-ng), a slow or lossy link (a delaying, resetting TCP proxy: netem needs
CAP_NET_ADMIN), the vector index's on-disk vectors evicted from the page cache as reclaim
would evict an index past its RAM (real disk reads and major faults; the pressure is arranged).
GPU faults change the modelled card (the GPU stand-in's, or the one under a real engine); a
replica killed is its engine process.
"""

from __future__ import annotations

import json
import signal
import socket
import sys
import time
from pathlib import Path
from typing import Any

import httpx

from infersight import userfile
from infersight.lab.live import api_limit, cpu_limit, engine_faults
from infersight.lab.live.fault_specs import FAULTS as FAULTS  # re-exported: the faults by name
from infersight.lab.live.procs import LabError, Proc, spawn, stop
from infersight.lab.live.servers import ServerUnavailable, binary
from infersight.lab.live.stack import Lab, restart
from infersight.safe_write import write_text

REDIS_MAXMEMORY_NORMAL = "64mb"


def _redis(port: int, *args: str) -> str:
    cmd = f"*{len(args)}\r\n" + "".join(f"${len(a.encode())}\r\n{a}\r\n" for a in args)
    with socket.create_connection(("127.0.0.1", port), timeout=3.0) as s:
        s.sendall(cmd.encode())
        data = b""
        while not data.endswith(b"\r\n") or (data.startswith(b"$") and data.count(b"\r\n") < 2):
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    if data.startswith(b"-"):
        raise LabError(f"redis refused {args[0]}: {data[1:].decode().strip()}")
    return data.decode("utf-8", "replace")


def _redis_info_field(port: int, field: str) -> int:
    for line in _redis(port, "INFO", "memory").splitlines():
        if line.startswith(field + ":"):
            return int(line.split(":", 1)[1])
    raise LabError(f"redis INFO has no {field}")


def _admin(
    url: str, path: str, body: dict[str, Any] | None = None, timeout: float = 5.0
) -> dict[str, Any]:
    try:
        with httpx.Client(timeout=timeout, trust_env=False) as http:
            r = http.post(url + path, json=body or {})
    except httpx.HTTPError as exc:
        raise LabError(f"{url} did not answer: {type(exc).__name__}") from None
    if r.status_code != 200:
        raise LabError(f"{url}{path} answered {r.status_code}: {r.text[:200]}")
    out: dict[str, Any] = r.json()
    return out


def _api_admin(lab: Lab) -> engine_faults.Admin:
    """A fault for a part's admin routes (None: clear that part's faults)."""

    def send(part: str, body: dict[str, Any] | None) -> dict[str, Any]:
        url = _part_url(lab, part)
        return _admin(url, "/admin/fault", body) if body else _admin(url, "/admin/clear")

    return send


def _part_url(lab: Lab, name: str) -> str:
    return f"http://127.0.0.1:{lab.part(name).port}"


def _active_path(lab: Lab) -> Path:
    return lab.dir / "faults" / "active.json"


def active(lab: Lab) -> list[dict[str, Any]]:
    try:
        raw = json.loads(userfile.read_text(_active_path(lab)))
    except (OSError, ValueError):
        return []
    return [a for a in raw if isinstance(a, dict)] if isinstance(raw, list) else []


def _record(lab: Lab, entry: dict[str, Any]) -> None:
    (lab.dir / "faults").mkdir(exist_ok=True)
    truth = lab.dir / "faults" / "truth.jsonl"
    old = userfile.read_text(truth) if truth.exists() else ""
    write_text(truth, old + json.dumps(entry, sort_keys=True) + "\n")


def _set_links(lab: Lab, replica: int, cfg: dict[str, float] | None) -> None:
    path = lab.dir / "links.json"
    try:
        links = json.loads(userfile.read_text(path))
    except (OSError, ValueError):
        links = {}
    if cfg is None:
        links.pop(str(replica), None)
    else:
        links[str(replica)] = cfg
    write_text(path, json.dumps(links) + "\n")


def inject(
    lab: Lab, name: str, replica: int = 0, duration_s: float | None = None
) -> dict[str, Any]:
    """Inject fault `name`; its ground truth is recorded and returned. The lab is read again
    from its record first: a part restarted since `lab` was read (a cleared replica-kill, a
    redeployed engine) would otherwise be recorded with its old pid, and outlive `lab down`."""
    lab = Lab.load(lab.dir)
    spec = FAULTS.get(name)
    if spec is None:
        raise LabError(f"unknown fault {name!r}; choose one of {', '.join(FAULTS)}")
    if not 0 <= replica < lab.replicas:
        raise LabError(f"--replica must be 0-{lab.replicas - 1} (the lab has {lab.replicas})")
    if any(a["fault"] == name and a.get("replica") == replica for a in active(lab)):
        raise LabError(f"{name} is already active; `lab fault clear` first")
    target = spec.where if spec.where != "replica" else f"replica-{replica}"
    params: dict[str, Any] = {}
    gpu = f"gpu-{replica}"
    if name == "batch-delay" and lab.real_engine:
        raise LabError(
            "batch-delay changes the GPU stand-in's batcher; this lab runs a real engine "
            f"({lab.engine}): `lab up` without --engine for it"
        )
    if name in engine_faults.NAMES:
        params = engine_faults.inject(lab, name, replica, _api_admin(lab))
    elif name == "api-pool-shrink":
        params = {"workers": 1}
        _admin(_part_url(lab, "api"), "/admin/fault", {"name": name, "params": params})
    elif name == "api-cpu-limit":
        params = _set_api_limit(lab, lab.api_cpus / api_limit.CUT)
    elif name == "api-gc-pressure":
        params = {"objects": 1_500_000}
        # the API builds the heap itself, under its CPU limit: seconds of CPU at a tenth of a core
        body = {"name": name, "params": params}
        _admin(_part_url(lab, "api"), "/admin/fault", body, timeout=120.0)
    elif name in ("batch-delay", "gpu-clock-drop", "gpu-xid", "gpu-vram-leak"):
        _admin(_part_url(lab, gpu), "/admin/fault", {"name": name, "params": params})
    elif name == "replica-kill":
        lab.part(_serving(lab, replica)).proc().signal_group(signal.SIGKILL)
    elif name == "redis-maxmemory":
        port = lab.part("redis").port
        # Room for about a tenth of the cached data, 200 kB at least: Redis evicts the rest
        # and keeps evicting. With less, the server's own overhead (client buffers) alone
        # passed the limit, and every SET failed with OOM after one purge instead.
        used = _redis_info_field(port, "used_memory")
        dataset = _redis_info_field(port, "used_memory_dataset")
        limit = used - dataset + max(200_000, dataset // 10)
        _redis(port, "CONFIG", "SET", "maxmemory", str(limit))
        params = {"maxmemory": limit}
    elif name == "vector-out-of-ram":
        params = {"interval_s": 0.02}
        _admin(_part_url(lab, "vector"), "/admin/fault", {"name": "out-of-ram", "params": params})
    elif name == "link-slow":
        params = {"delay_s": 0.2}
        _set_links(lab, replica, params)
    elif name == "link-lossy":
        params = {"drop": 0.1}
        _set_links(lab, replica, params)
    elif name in ("cpu-hog", "disk-pressure"):
        seconds = int(duration_s) if duration_s else 3600
        if name == "cpu-hog":
            args = ["--cpu", "2"]
        else:
            hdd = lab.dir / "faults" / "hdd"
            hdd.mkdir(parents=True, exist_ok=True)
            # O_DIRECT: past the page cache, so the disk itself is kept busy
            args = ["--hdd", "1", "--hdd-bytes", "256M", "--hdd-opts", "direct"]
            args += ["--temp-path", str(hdd)]
        _stress_ng(lab, f"fault-{name}", [*args, "--timeout", f"{seconds}s", "--quiet"])
        params = {"args": args, "timeout_s": seconds}
    now = time.time()
    entry = {
        "event": "inject",
        "fault": name,
        "target": target,
        "replica": replica if spec.where == "replica" else None,
        "what": spec.what,
        "layer": spec.layer,
        "expected": list(spec.expected),
        "modelled": not spec.real,
        "params": params,
        "at": now,
        "until": now + duration_s if duration_s else None,
    }
    _record(lab, entry)
    write_text(_active_path(lab), json.dumps([*active(lab), entry], indent=2) + "\n")
    if duration_s:
        _arm_timer(lab, duration_s)
    return entry


def _stress_ng(lab: Lab, stem: str, args: list[str]) -> None:
    """stress-ng as a recorded helper process (`lab down` and `clear` stop it)."""
    try:
        stress = binary("stress-ng")
    except ServerUnavailable as exc:
        raise LabError(str(exc)) from None
    proc = spawn(stem, [stress, *args], lab.dir / "logs" / f"{stem}.log", lab.dir)
    write_text(lab.dir / "pids" / f"{stem}.pid", f"{proc.pid} {proc.started}\n")


def _arm_timer(lab: Lab, seconds: float) -> None:
    """A recorded helper process that clears the lab's faults after `seconds`."""
    proc = spawn(
        "fault-timer",
        [sys.executable, "-m", "infersight.lab.live.fault_timer", str(lab.dir), str(seconds)],
        lab.dir / "logs" / "fault-timer.log",
        lab.dir,
    )
    write_text(lab.dir / "pids" / f"fault-timer-{proc.pid}.pid", f"{proc.pid} {proc.started}\n")


def clear(lab: Lab) -> list[dict[str, Any]]:
    """Undo every active fault; the cleared entries are recorded (the lab read again from its
    record first, as for `inject`)."""
    lab = Lab.load(lab.dir)
    cleared = []
    for a in active(lab):
        name, replica = a["fault"], a.get("replica") or 0
        if name in engine_faults.NAMES:
            engine_faults.clear(lab, name, replica, a.get("params") or {}, _api_admin(lab))
        elif name in ("api-pool-shrink", "api-gc-pressure"):
            _admin(_part_url(lab, "api"), "/admin/clear")
        elif name == "api-cpu-limit":
            _set_api_limit(lab, lab.api_cpus)
        elif name == "replica-kill":
            restart(lab, _serving(lab, replica))
        elif name in ("batch-delay", "gpu-clock-drop", "gpu-xid", "gpu-vram-leak"):
            _admin(_part_url(lab, f"gpu-{replica}"), "/admin/clear")
        elif name == "vector-out-of-ram":
            _admin(_part_url(lab, "vector"), "/admin/clear")
        elif name == "redis-maxmemory":
            _redis(lab.part("redis").port, "CONFIG", "SET", "maxmemory", REDIS_MAXMEMORY_NORMAL)
        elif name in ("link-slow", "link-lossy"):
            _set_links(lab, replica, None)
        elif name in ("cpu-hog", "disk-pressure"):
            _stop_recorded(lab, f"fault-{name}")
        entry = {"event": "clear", "fault": name, "target": a["target"], "at": time.time()}
        _record(lab, entry)
        cleared.append(entry)
    write_text(_active_path(lab), "[]\n")
    return cleared


def _set_api_limit(lab: Lab, cpus: float) -> dict[str, Any]:
    """The API's CFS quota set to `cpus` (its group was made by `lab up`)."""
    try:
        group = api_limit.set_limit(lab.dir, lab.part("api").pid, cpus)
    except cpu_limit.CpuLimitUnavailable as exc:
        raise LabError(f"api-cpu-limit: {exc}") from None
    return {"cpus": cpus, "cgroup": str(group.path)}


def _serving(lab: Lab, replica: int) -> str:
    """The part that serves replica `replica`'s requests: its engine, or the GPU stand-in."""
    return f"engine-{replica}" if lab.real_engine else f"gpu-{replica}"


def _stop_recorded(lab: Lab, stem: str) -> None:
    pidfile = lab.dir / "pids" / f"{stem}.pid"
    try:
        pid, started = userfile.read_text(pidfile).split()
    except (OSError, ValueError):
        return
    stop([Proc(stem, int(pid), int(started))])
    pidfile.unlink(missing_ok=True)
