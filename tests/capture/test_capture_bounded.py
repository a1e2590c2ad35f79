"""Each part is bounded in time: a server that accepts and never answers costs the metrics part
its time limit, and the rest of the capture is written all the same."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import SecretStr

from infersight.bundle import read_bundle
from infersight.capture import CaptureRequest, capture
from infersight.sources.connect import ConnectionSettings


@pytest.fixture
def silent_server() -> Iterator[str]:
    """A real TCP listener on loopback that accepts connections and never says a word."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        sock.settimeout(0.1)
        while not stop.is_set():
            try:
                held.append(sock.accept()[0])
            except TimeoutError:
                continue
            except OSError:
                return

    t = threading.Thread(target=accept, daemon=True)
    t.start()
    yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    stop.set()
    t.join()
    for c in held:
        c.close()
    sock.close()


def test_a_hung_server_does_not_block_the_rest(tmp_path: Path, silent_server: str) -> None:
    log = tmp_path / "app.log"
    log.write_text("ERROR upstream hung\n")
    conn = ConnectionSettings(
        url=silent_server, timeout=0.5, bearer_token=SecretStr("tok-very-secret-123")
    )
    req = CaptureRequest(
        out=tmp_path / "scene",
        connection=conn,
        since_s=600,
        logs=(log,),
        gpu=True,
        metrics_timeout_s=1.0,
        part_timeout_s=10.0,
    )
    res = capture(req)
    status = {p.name: p.status for p in res.parts}
    assert status["metrics"] in ("failed", "timed out")
    assert status["logs"] == status["gpu"] == status["host"] == "ok"
    assert not res.diagnosis.judged  # no metrics: "cannot judge", never a silent all-clear
    b = read_bundle(res.path)
    assert b.manifest.source["capture_failed"] == "metrics"
    assert b.read_artifact("logs/0-app.log") == b"ERROR upstream hung\n"
    everything = b"".join(b.read_artifact(n) for n in b.artifact_names())
    everything += b.manifest.model_dump_json().encode()
    assert b"tok-very-secret-123" not in everything
    record = json.loads(b.read_artifact("capture.json"))
    assert [p["name"] for p in record["parts"]] == ["metrics", "logs", "gpu", "host", "diagnosis"]
