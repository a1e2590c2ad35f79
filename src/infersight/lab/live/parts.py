"""The live lab's parts and their command lines: what `lab up` starts, in order (dependencies
first), on the ports it chose. `stack.py` starts, records and stops them."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from infersight.lab.engine import SERVED_MODEL, Engine, ServeLimits
from infersight.lab.live.procs import Proc
from infersight.lab.live.servers import ServerUnavailable, binary


@dataclass(frozen=True)
class Part:
    name: str
    kind: str  # gateway | api | cache | exporter | vector | gpu | link | host | prometheus
    port: int
    health: str  # an http URL answering 200 when ready, or "redis"
    metrics: str
    modelled: bool = False
    pid: int = 0
    started: int = 0
    extra_ports: tuple[int, ...] = ()
    argv: tuple[str, ...] = ()

    def proc(self) -> Proc:
        return Proc(self.name, self.pid, self.started)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind,
            "port": self.port,
            "health": self.health,
            "metrics": self.metrics,
            "modelled": self.modelled,
            "pid": self.pid,
            "started": self.started,
            "extra_ports": list(self.extra_ports),
            "argv": list(self.argv),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Part:
        return cls(
            name=str(d["name"]),
            kind=str(d["kind"]),
            port=int(d["port"]),
            health=str(d["health"]),
            metrics=str(d["metrics"]),
            modelled=bool(d.get("modelled", False)),
            pid=int(d["pid"]),
            started=int(d["started"]),
            extra_ports=tuple(int(p) for p in d.get("extra_ports", [])),
            argv=tuple(str(a) for a in d.get("argv", [])),
        )


def lab_binary(name: str) -> str:
    """`binary(name)`, also finding daemons in /usr/sbin (haproxy) when it is not on PATH,
    as for a user other than root on Debian."""
    try:
        return binary(name)
    except ServerUnavailable:
        sbin = Path("/usr/sbin") / name
        if sbin.is_file():
            return str(sbin)
        raise


def _python(module: str, *args: str) -> list[str]:
    return [sys.executable, "-m", f"infersight.lab.live.{module}", *args]


def engine_cache(lab_dir: Path, part: str) -> Path:
    """An engine replica's own compile cache, inside the lab: no replica starts warm from what
    another compiled, and a restart fault can empty one."""
    return lab_dir / "engine-cache" / part


def _replica_parts(
    lab_dir: Path, i: int, ports: dict[str, int], engine: Engine | None, limits: ServeLimits
) -> list[tuple[Part, list[str]]]:
    """Replica i: the GPU stand-in, or a real engine and the modelled card under it."""
    u = "http://127.0.0.1:{}{}".format
    gpu = ports[f"gpu-{i}"]
    if engine is None:
        part = Part(f"gpu-{i}", "gpu", gpu, u(gpu, "/health"), u(gpu, "/metrics"), modelled=True)
        return [(part, _python("gpu_standin", "--port", str(gpu), "--name", f"replica-{i}"))]
    port = ports[f"engine-{i}"]
    return [
        (
            Part(f"engine-{i}", "engine", port, u(port, "/health"), u(port, "/metrics")),
            engine.serve_argv(port, limits, engine_cache(lab_dir, f"engine-{i}")),
        ),
        (
            Part(f"gpu-{i}", "gpu", gpu, u(gpu, "/health"), u(gpu, "/dcgm/metrics"), modelled=True),
            _python(
                "card_follower", "--port", str(gpu), "--name", f"replica-{i}", "--engine", str(port)
            ),
        ),
    ]


def plan(
    lab_dir: Path,
    replicas: int,
    ports: dict[str, int],
    engine: Engine | None = None,
    limits: ServeLimits | None = None,
    cgroup_prefix: str = "infersight-lab-",
) -> list[tuple[Part, list[str]]]:
    """Each part and its command line, in start order (dependencies first); `cgroup_prefix`
    names the lab's CPU-limited groups (`api_limit.prefix`)."""
    P = ports
    u = "http://127.0.0.1:{}{}".format
    node_collectors = [
        f"--collector.{c}"
        for c in ("cpu", "meminfo", "vmstat", "netstat", "pressure", "diskstats", "loadavg")
    ]
    plan: list[tuple[Part, list[str]]] = [
        (
            Part("redis", "cache", P["redis"], "redis", u(P["redis_exporter"], "/metrics")),
            [
                lab_binary("redis-server"),
                "--port",
                str(P["redis"]),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--maxmemory",
                "64mb",
                "--maxmemory-policy",
                "allkeys-lru",
                "--dir",
                str(lab_dir / "redis"),
                "--daemonize",
                "no",
            ],
        ),
        (
            Part(
                "redis-exporter",
                "exporter",
                P["redis_exporter"],
                u(P["redis_exporter"], "/metrics"),
                u(P["redis_exporter"], "/metrics"),
            ),
            [
                lab_binary("prometheus-redis-exporter"),
                f"-redis.addr=redis://127.0.0.1:{P['redis']}",
                f"-web.listen-address=127.0.0.1:{P['redis_exporter']}",
            ],
        ),
        (
            Part(
                "vector",
                "vector",
                P["vector"],
                u(P["vector"], "/health"),
                u(P["vector"], "/metrics"),
            ),
            _python("vector_service", "--port", str(P["vector"]), "--name", "vector"),
        ),
    ]
    for i in range(replicas):
        plan += _replica_parts(lab_dir, i, P, engine, limits or ServeLimits())
    served = "engine" if engine is not None else "gpu"
    pairs = [f"{P[f'link-{i}']}:{P[f'{served}-{i}']}" for i in range(replicas)]
    plan += [
        (
            Part(
                "links",
                "link",
                P["link-0"],
                "tcp",
                "",
                extra_ports=tuple(P[f"link-{i}"] for i in range(replicas)),
            ),
            _python("linkproxy", "--control", str(lab_dir / "links.json"), *pairs),
        ),
        (
            Part(
                "haproxy",
                "gateway",
                P["gateway"],
                u(P["haproxy_metrics"], "/health"),
                u(P["haproxy_metrics"], "/metrics"),
                extra_ports=(P["haproxy_metrics"], P["llm"]),
            ),
            [lab_binary("haproxy"), "-db", "-f", str(lab_dir / "haproxy.cfg")],
        ),
        (
            Part("api", "api", P["api"], u(P["api"], "/health"), u(P["api"], "/metrics")),
            _python(
                "api_service",
                "--port",
                str(P["api"]),
                "--name",
                "api",
                "--redis",
                str(P["redis"]),
                "--vector",
                str(P["vector"]),
                "--llm",
                str(P["llm"]),
                *(
                    ["--llm-api", "openai", "--llm-model", SERVED_MODEL]
                    if engine is not None
                    else []
                ),
            ),
        ),
        (
            Part(
                "cadvisor",
                "exporter",
                P["cadvisor"],
                u(P["cadvisor"], "/health"),
                u(P["cadvisor"], "/metrics/api"),
            ),
            _python("cgroup_exporter", "--port", str(P["cadvisor"]), "--prefix", cgroup_prefix),
        ),
        (
            Part(
                "node-exporter",
                "host",
                P["node_exporter"],
                u(P["node_exporter"], "/metrics"),
                u(P["node_exporter"], "/metrics"),
            ),
            [
                lab_binary("prometheus-node-exporter"),
                "--collector.disable-defaults",
                *node_collectors,
                f"--web.listen-address=127.0.0.1:{P['node_exporter']}",
            ],
        ),
        (
            Part(
                "prometheus",
                "prometheus",
                P["prometheus"],
                u(P["prometheus"], "/-/ready"),
                u(P["prometheus"], "/metrics"),
            ),
            [
                lab_binary("prometheus"),
                f"--config.file={lab_dir / 'prometheus.yml'}",
                f"--storage.tsdb.path={lab_dir / 'prometheus-data'}",
                f"--web.listen-address=127.0.0.1:{P['prometheus']}",
                "--storage.tsdb.retention.time=2d",
                "--web.enable-lifecycle",
            ],
        ),
    ]
    return plan
