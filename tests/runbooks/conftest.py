"""A small rehearsal rig of real processes, started once per session for the runbook tests:
the test's HTTP target (target_server.py), redis-server, redis_exporter and a Prometheus that
scrapes the target and the exporter every second (job "targets")."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from infersight.lab.live.servers import LocalPrometheus, free_port
from servers import require

HERE = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Rig:
    target_url: str
    redis_port: int
    prometheus: str

    def value(self) -> float:
        with httpx.Client(timeout=5.0, trust_env=False) as http:
            return float(http.get(self.target_url + "/setting").json()["value"])

    def set_value(self, v: float) -> None:
        with httpx.Client(timeout=5.0, trust_env=False) as http:
            http.post(self.target_url + "/setting", json={"value": v}).raise_for_status()

    def query(self, expr: str) -> list[dict[str, object]]:
        with httpx.Client(timeout=5.0, trust_env=False) as http:
            r = http.get(self.prometheus + "/api/v1/query", params={"query": expr})
        result: list[dict[str, object]] = r.json()["data"]["result"]
        return result


def _wait(check: object, what: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError, httpx.HTTPError):
            if check():  # type: ignore[operator]
                return
        time.sleep(0.1)
    raise RuntimeError(f"{what} not ready after {timeout:.0f} s")


def _listening(port: int) -> bool:
    with socket.create_connection(("127.0.0.1", port), timeout=0.5):
        return True


def _spawn(argv: list[str], log: Path) -> subprocess.Popen[bytes]:
    with log.open("wb") as out:
        return subprocess.Popen(
            argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            start_new_session=True,
        )  # fmt: skip


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)


@pytest.fixture(scope="session")
def rig(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Rig]:
    for name in ("prometheus", "redis-server", "prometheus-redis-exporter"):
        require(name)
    work = tmp_path_factory.mktemp("runbook-rig")
    procs: list[subprocess.Popen[bytes]] = []
    try:
        target_port, redis_port, exporter_port = free_port(), free_port(), free_port()
        procs.append(
            _spawn([sys.executable, str(HERE / "target_server.py"), str(target_port)],
                   work / "target.log")
        )  # fmt: skip
        procs.append(
            _spawn(
                ["redis-server", "--port", str(redis_port), "--bind", "127.0.0.1", "--save", "",
                 "--appendonly", "no", "--maxmemory", "64mb", "--dir", str(work)],
                work / "redis.log",
            )
        )  # fmt: skip
        _wait(lambda: _listening(redis_port), "redis-server")
        procs.append(
            _spawn(
                ["prometheus-redis-exporter", f"-redis.addr=redis://127.0.0.1:{redis_port}",
                 f"-web.listen-address=127.0.0.1:{exporter_port}"],
                work / "exporter.log",
            )
        )  # fmt: skip
        target = f"http://127.0.0.1:{target_port}"
        _wait(lambda: httpx.get(target + "/setting", trust_env=False).status_code == 200, "target")
        _wait(lambda: _listening(exporter_port), "redis_exporter")
        with LocalPrometheus(
            scrape_targets=[f"127.0.0.1:{target_port}", f"127.0.0.1:{exporter_port}"],
            scrape_interval="1s",
        ) as prom:
            rig = Rig(target, redis_port, prom.url)
            _wait(lambda: len(rig.query("up == 1")) == 2, "Prometheus scrapes", 60.0)
            _wait(lambda: rig.query("redis_up == 1"), "redis_up", 60.0)
            yield rig
    finally:
        for p in reversed(procs):
            _stop(p)


#: a kubeconfig whose one cluster is a loopback port nothing listens on: kubectl, where it is
#: installed, reaches no cluster, whatever the machine's own configuration says
NO_CLUSTER = """\
apiVersion: v1
kind: Config
clusters:
- name: nowhere
  cluster: {server: "https://127.0.0.1:%d"}
users:
- name: nobody
  user: {token: "not-a-token"}
contexts:
- name: nowhere
  context: {cluster: nowhere, user: nobody, namespace: default}
current-context: nowhere
"""


@pytest.fixture
def no_cluster(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """$KUBECONFIG naming a cluster that is not there (a closed loopback port)."""
    path = tmp_path / "kubeconfig"
    path.write_text(NO_CLUSTER % free_port())
    monkeypatch.setenv("KUBECONFIG", str(path))
    return path
