"""Issue 38, item 8: a capture answered "accepted" survives a SIGTERM. `infersight serve` runs
as a real process; its Prometheus hangs (a listener that never answers), so each capture takes
its timeout and the later ones are still queued when SIGTERM comes. What the grace period does
not finish is named in the log, kept on disk, and run at the next start: every accepted capture
is finished exactly once across the two runs."""

from __future__ import annotations

import json
import re
import socket
import threading
import time
from pathlib import Path

import httpx
import pytest
from alerting_servers import ServeProcess
from notifications import notification

from infersight.timeparse import iso

pytestmark = pytest.mark.slow
TOKEN = "shutdown-t0ken-123456"
GROUPS = 4


class HungServer:
    """A loopback listener that takes connections and never answers: a hung Prometheus."""

    def __init__(self) -> None:
        self._sock = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._sock.getsockname()[1]}"
        self._held: list[socket.socket] = []
        self._thread = threading.Thread(target=self._accept, daemon=True)

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            self._held.append(conn)

    def __enter__(self) -> HungServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._sock.close()
        for conn in self._held:
            conn.close()


def _post(url: str, group: str) -> dict[str, str]:
    body = notification(group, [f"{group}-a"], starts_at=iso(time.time() - 60))
    r = httpx.post(
        url + "/alerts",
        content=json.dumps(body),
        headers={"Authorization": f"Bearer {TOKEN}"},
        timeout=30,
    )
    assert r.status_code == 200, r.text
    return dict(r.json())


def test_sigterm_keeps_accepted_captures_and_the_next_start_finishes_each_once(
    tmp_path: Path,
) -> None:
    out, queue = tmp_path / "captures", tmp_path / "captures" / ".queue"
    config = tmp_path / "serve.yaml"
    with HungServer() as prometheus:
        config.write_text(
            f"auth: {{bearer_token: {TOKEN}}}\n"
            f"prometheus: {{url: '{prometheus.url}', timeout: 1}}\n"
            "capture: {since: 10m, baselines: [1h], part_timeout: 5s, metrics_timeout: 5s}\n"
            f"out_dir: {out}\nmax_concurrency: 1\nqueue_size: 8\nshutdown_grace: 0.5s\n"
        )
        (tmp_path / "run1").mkdir()
        (tmp_path / "run2").mkdir()
        first = ServeProcess(config, tmp_path / "run1")
        with first:
            answers = [_post(first.url, f"g{i}") for i in range(GROUPS)]
            assert [a["status"] for a in answers] == ["accepted"] * GROUPS
            ids = [a["capture"] for a in answers]
        # SIGTERM: a capture takes a second at least (the hung server's timeout), so the grace
        # of half a second cannot finish four; each one left is named, and kept on disk
        log1 = first.log.read_text()
        left = re.findall(r"capture (\S+) for \S+ was (?:queued|running) at shutdown: kept", log1)
        done1 = [i for i in ids if f"capture {i} done" in log1]
        assert left and sorted(left + done1) == sorted(ids), log1[-3000:]
        assert sorted(p.stem for p in queue.glob("*.json")) == sorted(left)

        second = ServeProcess(config, tmp_path / "run2")
        with second:
            # Alertmanager repeating a kept group meanwhile is merged, not captured again
            kept = next(i for i, c in enumerate(ids) if c in left)
            assert _post(second.url, f"g{kept}")["status"] == "duplicate"
            deadline = time.monotonic() + 120
            while any(queue.glob("*.json")) and time.monotonic() < deadline:
                time.sleep(0.2)
            assert not any(queue.glob("*.json")), second.log.read_text()[-3000:]
            metrics = httpx.get(second.url + "/metrics", timeout=10).text
        log2 = second.log.read_text()
    for capture in left:
        assert f"capture {capture} for InferenceQueueBacklog resumed" in log2
    # every accepted capture finished exactly once over the two runs, with its reports
    for capture in ids:
        assert (log1 + log2).count(f"capture {capture} done") == 1, capture
        assert (out / capture / "report.json").is_file()
    assert f'infersight_serve_captures_total{{status="done"}} {len(left)}.0' in metrics
    assert "Traceback" not in log1 + log2


def test_sigterm_lets_queued_captures_finish_within_the_grace(tmp_path: Path) -> None:
    """With the default grace (20 s), three captures of a second or so each all finish before
    the process exits; before, the two still queued were dropped without a word."""
    out = tmp_path / "captures"
    config = tmp_path / "serve.yaml"
    with HungServer() as prometheus:
        config.write_text(
            f"auth: {{bearer_token: {TOKEN}}}\n"
            f"prometheus: {{url: '{prometheus.url}', timeout: 1}}\n"
            "capture: {since: 10m, baselines: [1h], part_timeout: 5s, metrics_timeout: 5s}\n"
            f"out_dir: {out}\nmax_concurrency: 1\nqueue_size: 8\n"
        )
        serve = ServeProcess(config, tmp_path)
        with serve:
            ids = [_post(serve.url, f"g{i}")["capture"] for i in range(3)]
        log = serve.log.read_text()
    for capture in ids:
        assert log.count(f"capture {capture} done") == 1, log[-3000:]
        assert (out / capture / "report.json").is_file()
    assert "at shutdown" not in log and not any((out / ".queue").glob("*.json"))
