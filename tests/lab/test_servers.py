"""The server harness: real Prometheus and VictoriaMetrics on free loopback ports."""

from __future__ import annotations

import socket
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import httpx
import pytest

from infersight.lab.live import servers
from infersight.lab.live.servers import (
    LocalPrometheus,
    LocalVictoriaMetrics,
    ServerStartError,
    ServerUnavailable,
    _LocalServer,
    binary,
    free_port,
    openmetrics_to_import,
)
from servers import require

T0 = 1_700_000_000

OM = f"""# TYPE queue gauge
queue{{instance="a:1"}} 1 {T0}
queue{{instance="a:1"}} 2 {T0 + 15}
# TYPE reqs counter
reqs_total{{instance="a:1"}} 10 {T0}
reqs_total{{instance="a:1"}} 40 {T0 + 15}
# EOF
"""


def _value(url: str, expr: str, at: float) -> float:
    r = httpx.get(url + "/api/v1/query", params={"query": expr, "time": at})
    [item] = r.json()["data"]["result"]
    return float(item["value"][1])


@pytest.fixture
def om_file(tmp_path: Path) -> Path:
    p = tmp_path / "h.om"
    p.write_text(OM)
    return p


def test_free_port_is_bindable() -> None:
    port = free_port()
    with socket.socket() as s:
        s.bind(("127.0.0.1", port))


def test_missing_binary_names_the_package(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(ServerUnavailable, match=r"apt-get install prometheus"):
        LocalPrometheus()
    with pytest.raises(ServerUnavailable, match=r"apt-get install victoria-metrics"):
        LocalVictoriaMetrics()
    with pytest.raises(ServerUnavailable, match=r"promtool.*apt-get install prometheus"):
        binary("promtool")


@pytest.mark.parametrize("ci", ["true", ""])
def test_require_fails_under_ci_and_skips_otherwise(
    monkeypatch: pytest.MonkeyPatch, ci: str
) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.setenv("CI", ci)
    expected = pytest.fail.Exception if ci == "true" else pytest.skip.Exception
    with pytest.raises(expected, match="apt-get install"):
        require("prometheus")


def test_openmetrics_to_import_converts_seconds_to_ms() -> None:
    lines = list(openmetrics_to_import(iter(OM.splitlines())))
    assert lines[0] == (f'queue{{instance="a:1"}} 1 {T0 * 1000}', 1.0)
    assert lines[-1] == (f'reqs_total{{instance="a:1"}} 40 {(T0 + 15) * 1000}', 40.0)
    assert len(lines) == 4


@pytest.mark.server
def test_prometheus_backfill_then_stop_cleans_up(
    prometheus_with_backfill: Callable[[Sequence[Path]], LocalPrometheus], om_file: Path
) -> None:
    prom = prometheus_with_backfill([om_file])
    assert prom.url.startswith("http://127.0.0.1:")
    assert _value(prom.url, "queue", T0 + 15) == 2
    assert _value(prom.url, "reqs_total", T0 + 15) == 40
    assert httpx.get(prom.url + "/-/ready").status_code == 200
    workdir = prom.workdir
    prom.stop()
    assert not workdir.exists()
    with pytest.raises(httpx.ConnectError):
        httpx.get(prom.url + "/-/ready")


@pytest.mark.server
def test_prometheus_keeps_a_given_workdir(tmp_path: Path) -> None:
    require("prometheus")
    with LocalPrometheus(workdir=tmp_path / "w") as prom:
        assert prom.data_dir.is_dir()
    assert (tmp_path / "w" / "prometheus.yml").exists()


@pytest.mark.server
def test_bad_backfill_file_is_reported(tmp_path: Path) -> None:
    require("prometheus")
    require("promtool")
    bad = tmp_path / "bad.om"
    bad.write_text("this is { not openmetrics\n")
    with pytest.raises(ServerStartError, match="promtool backfill"):
        LocalPrometheus(backfill=[bad], workdir=tmp_path / "w").start()


@pytest.mark.server
def test_start_failure_carries_the_log_tail() -> None:
    require("prometheus")
    with (
        pytest.raises(ServerStartError, match="exited with code") as exc,
        LocalPrometheus(extra_args=["--no-such-flag"]),
    ):
        pass
    assert "no-such-flag" in str(exc.value)


@pytest.mark.server
def test_victoria_metrics_import_is_queryable_at_once(om_file: Path) -> None:
    require("victoria-metrics")
    with LocalVictoriaMetrics(backfill=[om_file]) as vm:
        assert _value(vm.url, "queue", T0 + 15) == 2
        assert _value(vm.url, "reqs_total", T0 + 15) == 40
        workdir = vm.workdir
    assert not workdir.exists()


class _HttpServer(_LocalServer):
    """A stand-in server (python -m http.server): the lifecycle without Prometheus."""

    name = "http"

    def _command(self) -> list[str]:
        return [sys.executable, "-m", "http.server", str(self.port), "--bind", "127.0.0.1"]

    def _ready_path(self) -> str:
        return "/"


@pytest.mark.slow
def test_start_retries_when_another_process_takes_the_port(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        ports = iter([taken.getsockname()[1]])
        monkeypatch.setattr(servers, "free_port", lambda: next(ports, None) or free_port())
        with _HttpServer(None) as srv:
            assert srv.port != taken.getsockname()[1]
            assert httpx.get(srv.url + "/", trust_env=False).status_code == 200
            assert "already in use" in srv.log_tail(40).lower()
            workdir = srv.workdir
    assert not workdir.exists()


def test_interrupt_during_start_or_stop_leaves_no_process_or_dir(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    class Interrupted(_HttpServer):
        def _after_ready(self) -> None:
            self.started_proc = self._proc
            raise KeyboardInterrupt

    srv = Interrupted(None)
    with pytest.raises(KeyboardInterrupt):
        srv.start()
    assert srv.started_proc is not None and srv.started_proc.poll() is not None
    assert not srv.workdir.exists()

    srv2 = _HttpServer(None)
    srv2.start()
    proc = srv2._proc
    assert proc is not None
    real_wait = proc.wait
    calls = iter([KeyboardInterrupt()])

    def wait(timeout: float | None = None) -> int:
        exc = next(calls, None)
        if exc is not None:
            raise exc  # Ctrl-C while stop() waits for the process to exit
        return real_wait(timeout)

    monkeypatch.setattr(proc, "wait", wait)
    with pytest.raises(KeyboardInterrupt):
        srv2.stop()
    assert proc.poll() is not None
    assert not srv2.workdir.exists()
