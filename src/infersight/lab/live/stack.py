"""`lab up|down|status`: the live lab's processes, started, recorded and stopped.

Every part is a real process on a loopback port, started in its own session so that `lab down`
stops it and whatever it forked, and recorded in `DIR/lab.json` and `DIR/pids/NAME.pid` (pid and
start time). `lab down` signals only processes whose start time still matches the record.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from infersight import userfile
from infersight.lab.engine import Engine, ServeLimits
from infersight.lab.live import api_limit, configs
from infersight.lab.live.parts import Part, lab_binary, plan
from infersight.lab.live.procs import LabError, Proc, listening, spawn, stop
from infersight.lab.live.servers import ServerUnavailable
from infersight.safe_write import write_text

STATE = "lab.json"
READY_TIMEOUT_S = 90.0
#: a real engine compiles its model at start: 54-69 s cold here, alone on 2 cores
ENGINE_READY_TIMEOUT_S = 600.0
STANDIN = "standin"
MODELLED_NOTE = (
    "GPU stand-in: batching and queueing are real code (infersight.serving); the GPU "
    "arithmetic, clocks, temperature and VRAM are modelled"
)
ENGINE_NOTE = (
    "modelled card under a real vLLM engine: the engine's batching, KV cache and metrics are "
    "vLLM's own; clocks, temperature, VRAM and Xid are modelled, busy while the engine runs work"
)
#: Debian packages of the lab's binaries (installed by scripts/ensure-system-deps.sh).
LAB_BINARIES = {
    "haproxy": "haproxy",
    "redis-server": "redis-server",
    "prometheus-redis-exporter": "prometheus-redis-exporter",
    "prometheus-node-exporter": "prometheus-node-exporter",
    "prometheus": "prometheus",
}


@dataclass
class Lab:
    """What `lab.json` records."""

    dir: Path
    replicas: int
    ports: dict[str, int]
    parts: list[Part] = field(default_factory=list)
    started_at: float = 0.0
    #: what serves the model: the GPU stand-in, or a real engine and its version
    engine: str = STANDIN
    #: where the real engine is installed ("" for the stand-in)
    engine_dir: str = ""
    #: the API's CPU limit, or why it has none (`api_limit.place`)
    api_cpu_limit: str = ""
    #: the API's limit in CPUs as `lab up` set it (what `api-cpu-limit` halves and clear restores)
    api_cpus: float = api_limit.API_CPUS

    @property
    def real_engine(self) -> bool:
        return self.engine != STANDIN

    @property
    def note(self) -> str:
        return ENGINE_NOTE if self.real_engine else MODELLED_NOTE

    @property
    def gateway_url(self) -> str:
        return f"http://127.0.0.1:{self.ports['gateway']}"

    @property
    def prometheus_url(self) -> str:
        return f"http://127.0.0.1:{self.ports['prometheus']}"

    def part(self, name: str) -> Part:
        for p in self.parts:
            if p.name == name:
                return p
        raise LabError(f"the lab in {self.dir} has no part {name!r}")

    def save(self) -> None:
        body = {
            "replicas": self.replicas,
            "ports": self.ports,
            "started_at": self.started_at,
            "engine": self.engine,
            "engine_dir": self.engine_dir,
            "api_cpu_limit": self.api_cpu_limit,
            "api_cpus": self.api_cpus,
            "gateway": self.gateway_url,
            "prometheus": self.prometheus_url,
            "parts": [p.to_dict() for p in self.parts],
        }
        write_text(self.dir / STATE, json.dumps(body, indent=2) + "\n")
        pids = self.dir / "pids"
        pids.mkdir(exist_ok=True)
        for p in self.parts:
            write_text(pids / f"{p.name}.pid", f"{p.pid} {p.started}\n")

    @classmethod
    def load(cls, lab_dir: Path) -> Lab:
        path = lab_dir / STATE
        if not os.path.lexists(path):
            raise LabError(f"no lab in {lab_dir} (no {STATE}); start one with `lab up`")
        try:
            raw = json.loads(userfile.read_text(path))
            return cls(
                dir=lab_dir,
                replicas=int(raw["replicas"]),
                ports={str(k): int(v) for k, v in raw["ports"].items()},
                parts=[Part.from_dict(d) for d in raw["parts"]],
                started_at=float(raw.get("started_at", 0.0)),
                engine=str(raw.get("engine", STANDIN)),
                engine_dir=str(raw.get("engine_dir", "")),
                api_cpu_limit=str(raw.get("api_cpu_limit", "")),
                api_cpus=float(raw.get("api_cpus", api_limit.API_CPUS)),
            )
        except userfile.UserFileError as exc:
            raise LabError(str(exc)) from None
        except (ValueError, KeyError, TypeError) as exc:
            raise LabError(f"{path} is unreadable or damaged: {exc}") from None


def check_binaries() -> None:
    """Every third-party binary the lab runs, or one line naming the packages to install."""
    missing = []
    for name in LAB_BINARIES:
        try:
            lab_binary(name)
        except ServerUnavailable:
            missing.append(LAB_BINARIES[name])
    if missing:
        raise ServerUnavailable(
            f"the live lab needs Debian packages {', '.join(sorted(set(missing)))}: run "
            "scripts/ensure-system-deps.sh (as root) or apt-get install them"
        )
    for module in ("fastapi", "uvicorn", "redis", "hnswlib", "prometheus_client"):
        try:
            __import__(module)
        except ImportError:
            raise ServerUnavailable(
                f"the live lab needs the Python package {module}: pip install 'infersight[lab]'"
            ) from None


def _free_ports(names: list[str]) -> dict[str, int]:
    """Distinct free loopback ports, all held until every one is found."""
    socks, out = [], {}
    try:
        for n in names:
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind(("127.0.0.1", 0))
            socks.append(s)
            out[n] = s.getsockname()[1]
    finally:
        for s in socks:
            s.close()
    return out


def _healthy(part: Part, timeout: float = 2.0) -> bool:
    if part.health == "redis":
        try:
            with socket.create_connection(("127.0.0.1", part.port), timeout=timeout) as s:
                s.sendall(b"PING\r\n")
                return s.recv(16).startswith(b"+PONG")
        except OSError:
            return False
    try:
        with httpx.Client(timeout=timeout, trust_env=False) as http:
            return http.get(part.health).status_code == 200
    except httpx.HTTPError:
        return False


def _tail(path: Path, lines: int = 12) -> str:
    try:
        return "\n".join(path.read_text("utf-8", errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


def _wait_ready(part: Part, proc: Proc, log: Path, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not proc.alive():
            raise LabError(f"{part.name} exited before it was ready; its log ends:\n{_tail(log)}")
        ok = (
            all(listening(p) for p in (part.port, *part.extra_ports))
            if part.health == "tcp"
            else _healthy(part)
        )
        if ok:
            return
        time.sleep(0.2)
    raise LabError(f"{part.name} not ready after {timeout:.0f} s; its log ends:\n{_tail(log)}")


def restart(lab: Lab, name: str, ready_timeout: float = READY_TIMEOUT_S, wait: bool = True) -> Part:
    """Start a recorded part again with its recorded command line (after `replica-kill`);
    ready when it returns, unless `wait` is False (a restart whose load is the fault)."""
    old = lab.part(name)
    if old.proc().alive():
        return old
    log = lab.dir / "logs" / f"{name}.log"
    proc = spawn(name, old.argv, log, lab.dir)
    new = dataclasses.replace(old, pid=proc.pid, started=proc.started)
    lab.parts = [new if p.name == name else p for p in lab.parts]
    lab.save()
    if wait:
        wait_ready(lab, name, ready_timeout)
    return new


def wait_ready(lab: Lab, name: str, ready_timeout: float = READY_TIMEOUT_S) -> None:
    """Until the recorded part answers its health check (an engine gets its longer load)."""
    part = lab.part(name)
    engine = part.kind == "engine"
    timeout = max(ready_timeout, ENGINE_READY_TIMEOUT_S) if engine else ready_timeout
    _wait_ready(part, part.proc(), lab.dir / "logs" / f"{name}.log", timeout)


def respawn(lab: Lab, name: str, argv: list[str], wait: bool = True) -> Part:
    """Stop a recorded part and start it with another command line (an engine redeployed with
    other settings); ready when it returns, unless `wait` is False."""
    old = lab.part(name)
    survivors = stop([old.proc()])
    if survivors:
        raise LabError(f"could not stop {name} to restart it")
    dead = dataclasses.replace(old, argv=tuple(argv))
    lab.parts = [dead if p.name == name else p for p in lab.parts]
    return restart(lab, name, wait=wait)


def _wait_http(url: str, timeout: float, log: Path) -> None:
    deadline = time.monotonic() + timeout
    with httpx.Client(timeout=2.0, trust_env=False) as http:
        while time.monotonic() < deadline:
            with contextlib.suppress(httpx.HTTPError):
                if http.get(url).status_code == 200:
                    return
            time.sleep(0.25)
    raise LabError(f"{url} not answering after {timeout:.0f} s; the log ends:\n{_tail(log)}")


def running_parts(lab_dir: Path) -> list[str]:
    """Names of the recorded parts still alive (empty when there is no lab)."""
    try:
        lab = Lab.load(lab_dir)
    except LabError:
        return []
    return [p.name for p in lab.parts if p.proc().alive()]


def up(
    lab_dir: Path,
    replicas: int = 3,
    progress: Callable[[str], None] = lambda _m: None,
    ready_timeout: float = READY_TIMEOUT_S,
    engine: Engine | None = None,
    limits: ServeLimits | None = None,
    api_cpus: float = api_limit.API_CPUS,
) -> Lab:
    """Start the stack in `lab_dir`; on any failure stop what was started and raise. With an
    `engine`, each replica is a real vLLM process (`limits` its settings) and a modelled card;
    the API runs under a CPU limit of `api_cpus`."""
    # the children run in the folder and are handed paths inside it: a relative one would be
    # read from there (Redis looked for lab/lab/redis)
    lab_dir = lab_dir.absolute()
    if not 1 <= replicas <= 8:
        raise LabError("--replicas must be between 1 and 8")
    check_binaries()
    lab_dir.mkdir(parents=True, exist_ok=True)
    alive = running_parts(lab_dir)
    if alive:
        raise LabError(
            f"a lab is already up in {lab_dir} ({', '.join(alive)}); `lab down` it first"
        )
    for sub in ("logs", "redis", "pids", "faults"):
        (lab_dir / sub).mkdir(exist_ok=True)
    names = [
        "gateway",
        "haproxy_metrics",
        "llm",
        "api",
        "vector",
        "redis",
        "redis_exporter",
        "node_exporter",
        "cadvisor",
        "prometheus",
        *(f"gpu-{i}" for i in range(replicas)),
        *(f"link-{i}" for i in range(replicas)),
        *(f"engine-{i}" for i in range(replicas) if engine is not None),
    ]
    ports = _free_ports(names)
    write_text(lab_dir / "haproxy.cfg", configs.haproxy_cfg(ports, replicas))
    write_text(lab_dir / "rules.yml", configs.recording_rules())
    write_text(
        lab_dir / "prometheus.yml",
        configs.prometheus_yml(
            ports, replicas, [str(lab_dir / "rules.yml")], real_engine=engine is not None
        ),
    )
    write_text(lab_dir / "links.json", "{}\n")
    kind = f"vllm {engine.version}" if engine is not None else STANDIN
    lab = Lab(
        lab_dir,
        replicas,
        ports,
        started_at=time.time(),
        engine=kind,
        engine_dir=str(engine.dir) if engine is not None else "",
        api_cpus=api_cpus,
    )
    try:
        for spec, argv in plan(
            lab_dir, replicas, ports, engine, limits, cgroup_prefix=api_limit.prefix(lab_dir)
        ):
            progress(f"starting {spec.name} on 127.0.0.1:{spec.port}")
            log = lab_dir / "logs" / f"{spec.name}.log"
            proc = spawn(spec.name, argv, log, lab_dir)
            part = dataclasses.replace(spec, pid=proc.pid, started=proc.started, argv=tuple(argv))
            lab.parts.append(part)
            lab.save()
            if part.kind == "engine":
                progress(f"{part.name}: vLLM loads its model (about 30 s)")
            wait = max(ready_timeout, ENGINE_READY_TIMEOUT_S) if part.kind == "engine" else None
            _wait_ready(part, proc, log, wait or ready_timeout)
            if part.name == "api":
                lab.api_cpu_limit = api_limit.place(lab_dir, part.pid, api_cpus)
                lab.save()
                progress(lab.api_cpu_limit)
        # Ready means served end to end: HAProxy has seen the API and a replica pass a check.
        progress("waiting for the gateway's health checks")
        for url in (f"{lab.gateway_url}/health", f"http://127.0.0.1:{ports['llm']}/health"):
            _wait_http(url, ready_timeout, lab_dir / "logs" / "haproxy.log")
    except BaseException:
        down(lab_dir, lab=lab)
        raise
    return lab


def down(lab_dir: Path, lab: Lab | None = None) -> list[str]:
    """Stop every process the lab recorded (faults' helpers too); the names that were alive."""
    lab = lab if lab is not None else Lab.load(lab_dir)
    procs = [p.proc() for p in lab.parts]
    procs += [p for p in fault_procs(lab_dir) if p.name not in {q.name for q in procs}]
    alive = [p.name for p in procs if p.alive()]
    survivors = stop(procs)
    if survivors:
        raise LabError(f"could not stop {', '.join(survivors)}; their pids are in {lab_dir}/pids")
    for pidfile in (lab_dir / "pids").glob("*.pid"):
        pidfile.unlink(missing_ok=True)
    api_limit.release(lab_dir)
    (lab_dir / STATE).unlink(missing_ok=True)
    return alive


def fault_procs(lab_dir: Path) -> list[Proc]:
    """Helpers a fault started (a CPU hog), recorded as `pids/fault-*.pid`."""
    out = []
    for pidfile in sorted((lab_dir / "pids").glob("fault-*.pid")):
        with contextlib.suppress(OSError, ValueError):
            pid, started = userfile.read_text(pidfile).split()
            out.append(Proc(pidfile.stem, int(pid), int(started)))
    return out


@dataclass(frozen=True)
class PartStatus:
    name: str
    kind: str
    port: int
    alive: bool
    healthy: bool
    metrics: str
    note: str

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def status(lab_dir: Path) -> list[PartStatus]:
    lab = Lab.load(lab_dir)
    out = []
    for p in lab.parts:
        alive = p.proc().alive()
        if p.health == "tcp":
            healthy = alive and all(listening(x) for x in (p.port, *p.extra_ports))
        else:
            healthy = alive and _healthy(p)
        out.append(
            PartStatus(
                p.name,
                p.kind,
                p.port,
                alive,
                healthy,
                p.metrics,
                lab.note if p.modelled else "",
            )
        )
    return out
