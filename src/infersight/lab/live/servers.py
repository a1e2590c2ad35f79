"""Real Prometheus-compatible servers on a free loopback port, for tests, the demo and benchmarks.

    with LocalPrometheus(backfill=[Path("history.om")]) as prom:
        PrometheusClient(prom.url).query("up", at=...)

Each server runs in its own temporary directory (made on start, removed on stop, unless
`workdir` was given), listens on 127.0.0.1 only and is stopped when the block ends. History is
loaded before the server answers: promtool blocks for Prometheus, the import API for
VictoriaMetrics (which then waits until every imported sample is queryable; a file that repeats
a (series, timestamp) pair would make that wait time out).
"""

from __future__ import annotations

import contextlib
import math
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import TracebackType
from typing import Self

import httpx

#: Debian package that ships each binary.
PACKAGES: dict[str, str] = {
    "prometheus": "prometheus",
    "promtool": "prometheus",
    "victoria-metrics": "victoria-metrics",
}
READY_TIMEOUT_S = 60.0
STOP_GRACE_S = 10.0
PORT_ATTEMPTS = 3  # free_port() can race with another process binding the port first


class ServerUnavailable(RuntimeError):
    """A server binary is not installed; the message names the package to install."""


class ServerStartError(RuntimeError):
    """A server did not become ready; the message carries the tail of its log."""


def binary(name: str) -> str:
    """Absolute path of an installed binary, or ServerUnavailable with the apt-get hint."""
    path = shutil.which(name)
    if path is None:
        pkg = PACKAGES.get(name, name)
        raise ServerUnavailable(
            f"{name} not found on PATH: install it with `apt-get install {pkg}`"
        )
    return path


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _tail(path: Path, lines: int = 15) -> str:
    try:
        text = path.read_text("utf-8", errors="replace")
    except OSError:
        return "(no log)"
    return "\n".join(text.splitlines()[-lines:]) or "(empty log)"


def _scrape_config(targets: Sequence[str], interval: str, evaluation: bool = True) -> str:
    lines = ["global:", f"  scrape_interval: {interval}"]
    if evaluation:  # Prometheus only; VictoriaMetrics refuses unknown fields
        lines.append(f"  evaluation_interval: {interval}")
    if targets:
        lines += [
            "scrape_configs:",
            "  - job_name: targets",
            f"    scrape_interval: {interval}",
            f"    scrape_timeout: {interval}",
            "    static_configs:",
            "      - targets: [" + ", ".join(f'"{t}"' for t in targets) + "]",
        ]
    return "\n".join(lines) + "\n"


class _LocalServer:
    """Shared lifecycle: temp dir, process, readiness poll, stop."""

    name = "server"

    def __init__(self, workdir: Path | None) -> None:
        self._given_dir = workdir
        self._made_dir: Path | None = None  # the temp dir start() created, removed by stop()
        self.workdir = workdir if workdir is not None else Path("(not started)")
        self.port = 0
        self.url = ""
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def data_dir(self) -> Path:
        return self.workdir / "data"

    @property
    def _log(self) -> Path:
        return self.workdir / f"{self.name}.log"

    # -- to be provided -------------------------------------------------------------------------
    def _prepare(self) -> None: ...
    def _command(self) -> list[str]:
        raise NotImplementedError

    def _ready_path(self) -> str:
        raise NotImplementedError

    def _after_ready(self) -> None: ...

    # -- lifecycle ------------------------------------------------------------------------------
    def start(self) -> None:
        if self._given_dir is None:
            self._made_dir = self.workdir = Path(
                tempfile.mkdtemp(prefix=f"infersight-{self.name}-")
            )
        self.workdir.mkdir(parents=True, exist_ok=True)
        try:
            self._prepare()
            for attempt in range(PORT_ATTEMPTS):
                self.port = free_port()
                self.url = f"http://127.0.0.1:{self.port}"
                with open(self._log, "ab") as log:
                    self._proc = subprocess.Popen(
                        self._command(), stdout=log, stderr=subprocess.STDOUT, cwd=self.workdir
                    )
                try:
                    self._wait_ready()
                    break
                except ServerStartError:
                    # Another process took the port between free_port() and the bind: retry
                    # on a fresh port; any other failure is reported as is.
                    if attempt + 1 == PORT_ATTEMPTS or not self._lost_port_race():
                        raise
                    self._proc = None
            self._after_ready()
        except BaseException:
            self.stop()
            raise

    def _wait_ready(self, timeout: float = READY_TIMEOUT_S) -> None:
        assert self._proc is not None
        deadline = time.monotonic() + timeout
        with httpx.Client(timeout=2.0, trust_env=False) as http:
            while time.monotonic() < deadline:
                if self._proc.poll() is not None:
                    raise ServerStartError(
                        f"{self.name} exited with code {self._proc.returncode} before it was "
                        f"ready; its log ends:\n{_tail(self._log)}"
                    )
                with contextlib.suppress(httpx.HTTPError):
                    if http.get(self.url + self._ready_path()).status_code == 200:
                        return
                time.sleep(0.1)
        raise ServerStartError(
            f"{self.name} at {self.url} not ready after {timeout:.0f} s; its log ends:\n"
            f"{_tail(self._log)}"
        )

    def _lost_port_race(self) -> bool:
        exited = self._proc is not None and self._proc.poll() is not None
        return exited and "address already in use" in _tail(self._log, 40).lower()

    def stop(self) -> None:
        proc, self._proc = self._proc, None
        try:
            if proc is not None and proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(STOP_GRACE_S)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
        finally:
            # Also when interrupted (Ctrl-C) while waiting: leave no process and no temp dir.
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait()
            made, self._made_dir = self._made_dir, None
            if made is not None:
                shutil.rmtree(made, ignore_errors=True)

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def log_tail(self, lines: int = 15) -> str:
        return _tail(self._log, lines)

    def _run(self, cmd: list[str], what: str) -> None:
        res = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if res.returncode != 0:
            out = (res.stderr or res.stdout).strip().splitlines()[-10:]
            raise ServerStartError(f"{what} failed (exit {res.returncode}): " + "\n".join(out))


class LocalPrometheus(_LocalServer):
    """Prometheus on 127.0.0.1:PORT; `backfill` OpenMetrics files are loaded with promtool."""

    name = "prometheus"

    def __init__(
        self,
        *,
        scrape_targets: Sequence[str] = (),
        scrape_interval: str = "1s",
        backfill: Sequence[Path] = (),
        retention: str = "30d",
        workdir: Path | None = None,
        extra_args: Sequence[str] = (),
    ) -> None:
        self._bin = binary("prometheus")
        self._promtool = binary("promtool") if backfill else ""
        super().__init__(workdir)
        self.scrape_targets = tuple(scrape_targets)
        self.scrape_interval = scrape_interval
        self.backfill = tuple(Path(p) for p in backfill)
        self.retention = retention
        self.extra_args = tuple(extra_args)

    @property
    def config_file(self) -> Path:
        return self.workdir / "prometheus.yml"

    def _prepare(self) -> None:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.config_file.write_text(_scrape_config(self.scrape_targets, self.scrape_interval))
        for f in self.backfill:
            cmd = [self._promtool, "tsdb", "create-blocks-from", "openmetrics"]
            self._run([*cmd, str(f), str(self.data_dir)], f"promtool backfill of {f}")

    def _command(self) -> list[str]:
        return [
            self._bin,
            f"--config.file={self.config_file}",
            f"--storage.tsdb.path={self.data_dir}",
            f"--web.listen-address=127.0.0.1:{self.port}",
            f"--storage.tsdb.retention.time={self.retention}",
            *self.extra_args,
        ]

    def _ready_path(self) -> str:
        return "/-/ready"


def openmetrics_to_import(lines: Iterator[str]) -> Iterator[tuple[str, float]]:
    """OpenMetrics sample lines (timestamps in s) as text exposition lines (timestamps in ms).

    Yields (line, value); comments, `# EOF` and blank lines are dropped.
    """
    for raw in lines:
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        head, value, ts = line.rsplit(None, 2)
        yield f"{head} {value} {round(float(ts) * 1000)}", float(value)


class LocalVictoriaMetrics(_LocalServer):
    """VictoriaMetrics on 127.0.0.1:PORT; `backfill` files are imported through its HTTP API."""

    name = "victoria-metrics"

    def __init__(
        self,
        *,
        scrape_targets: Sequence[str] = (),
        scrape_interval: str = "1s",
        backfill: Sequence[Path] = (),
        retention: str = "100y",
        workdir: Path | None = None,
        extra_args: Sequence[str] = (),
    ) -> None:
        self._bin = binary("victoria-metrics")
        super().__init__(workdir)
        self.scrape_targets = tuple(scrape_targets)
        self.scrape_interval = scrape_interval
        self.backfill = tuple(Path(p) for p in backfill)
        self.retention = retention
        self.extra_args = tuple(extra_args)

    @property
    def config_file(self) -> Path:
        return self.workdir / "scrape.yml"

    def _prepare(self) -> None:
        cfg = _scrape_config(self.scrape_targets, self.scrape_interval, evaluation=False)
        self.config_file.write_text(cfg)

    def _command(self) -> list[str]:
        cmd = [
            self._bin,
            f"-httpListenAddr=127.0.0.1:{self.port}",
            f"-storageDataPath={self.data_dir}",
            f"-retentionPeriod={self.retention}",
            "-search.disableCache",
            "-search.latencyOffset=0s",
        ]
        if self.scrape_targets:
            cmd.append(f"-promscrape.config={self.config_file}")
        return [*cmd, *self.extra_args]

    def _ready_path(self) -> str:
        return "/health"

    def _after_ready(self) -> None:
        if self.backfill:
            self.import_files(self.backfill)

    def import_files(self, files: Sequence[Path], timeout: float = READY_TIMEOUT_S) -> None:
        """POST each file's samples, then wait until every finite sample is queryable."""
        expected = 0
        lo, hi = math.inf, -math.inf
        with httpx.Client(base_url=self.url, timeout=60.0, trust_env=False) as http:
            for f in files:
                batch: list[str] = []
                with open(f, encoding="utf-8") as fh:
                    for line, value in openmetrics_to_import(iter(fh)):
                        batch.append(line)
                        expected += math.isfinite(value)
                        ts = float(line.rsplit(None, 1)[1]) / 1000
                        lo, hi = min(lo, ts), max(hi, ts)
                        if len(batch) >= 50_000:
                            self._post(http, batch)
                            batch = []
                self._post(http, batch)
            if expected:
                self._wait_visible(http, expected, lo, hi, timeout)

    @staticmethod
    def _post(http: httpx.Client, batch: list[str]) -> None:
        if not batch:
            return
        r = http.post("/api/v1/import/prometheus", content="\n".join(batch) + "\n")
        if r.status_code >= 300:
            raise ServerStartError(f"victoria-metrics import failed ({r.status_code}): {r.text}")

    def _wait_visible(
        self, http: httpx.Client, expected: int, lo: float, hi: float, timeout: float
    ) -> None:
        window = f"{math.ceil(hi - lo) + 60}s"
        query = f'sum(count_over_time({{__name__!=""}}[{window}]))'
        deadline = time.monotonic() + timeout
        seen = 0.0
        while time.monotonic() < deadline:
            with contextlib.suppress(httpx.HTTPError):
                http.get("/internal/force_flush")
                r = http.get("/api/v1/query", params={"query": query, "time": f"{hi + 1:.3f}"})
                result = r.json().get("data", {}).get("result", [])
                seen = float(result[0]["value"][1]) if result else 0.0
                if seen >= expected:
                    return
            time.sleep(0.2)
        raise ServerStartError(
            f"victoria-metrics: only {seen:.0f} of {expected} imported samples queryable after "
            f"{timeout:.0f} s; its log ends:\n{self.log_tail()}"
        )
