"""A hostile sweep of `capture`: secrets planted in every place a capture reads (the command
line of the process it dumps, the logs it tails, the token file of its connection, the URL) are
found nowhere in the bundle: not in the stacks, the logs, capture.json, the manifest, the notes."""

from __future__ import annotations

import json
import subprocess
import sys
import tarfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from infersight.capture import CaptureRequest, capture
from infersight.capture.run import scrub_artifacts
from infersight.capture.stacks import py_spy
from infersight.lab.live.servers import free_port
from infersight.redact import Redactor
from infersight.sources.connect import ConnectionSettings

API_KEY = "sk-live-4f9a8b7c6d5e"
FLAG_TOKEN = "tok-flag-1b2c3d4e"
PASSWORD = "pw-flag-5f6a7b8c"
HEADER_BEARER = "hdr-bearer-9d0e1f2a"
HEADER_KEY = "hdr-key-3b4c5d6e"
DB_PASSWORD = "dbpw-7f8a9b0c"
URL_PASSWORD = "urlpw-1d2e3f4a"
FILE_TOKEN = "file-token-5b6c7d8e9f"  # read from --bearer-token-file only
SECRETS = [API_KEY, FLAG_TOKEN, PASSWORD, HEADER_BEARER, HEADER_KEY, DB_PASSWORD, URL_PASSWORD,
           FILE_TOKEN]  # fmt: skip
ARGV = [
    "--model", "m", "--api-key", API_KEY, "--token", FLAG_TOKEN, f"--password={PASSWORD}",
    "-H", f"Authorization: Bearer {HEADER_BEARER}", "--header", f"X-Api-Key: {HEADER_KEY}",
    f"db_password={DB_PASSWORD}", f"--upstream=http://svc:{URL_PASSWORD}@db:5432/x",
]  # fmt: skip


@pytest.fixture
def engine() -> Iterator[subprocess.Popen[bytes]]:
    """A Python process started with credentials on its command line, as vLLM often is."""
    code = "import sys, time; print('up', flush=True); time.sleep(600)"
    proc = subprocess.Popen([sys.executable, "-c", code, *ARGV], stdout=subprocess.PIPE)
    assert proc.stdout is not None and proc.stdout.readline() == b"up\n"
    yield proc
    proc.kill()
    proc.wait()


def _everything(bundle: Path) -> dict[str, str]:
    with tarfile.open(bundle) as tar:
        return {
            m.name: tar.extractfile(m).read().decode("utf-8", "replace")  # type: ignore[union-attr]
            for m in tar.getmembers()
            if m.isfile()
        }


@pytest.mark.slow
def test_no_planted_secret_reaches_the_bundle(
    engine: subprocess.Popen[bytes], tmp_path: Path
) -> None:
    token_file = tmp_path / "prom-token"
    token_file.write_text(FILE_TOKEN + "\n")
    log = tmp_path / "engine.log"
    log.write_text(
        f"{time.strftime('%F %T')} INFO started with args {' '.join(ARGV)}\n"
        f"WARNING upstream rejected {FILE_TOKEN}\n"  # echoed bare: only knowing it can mask it
        f"DEBUG headers {{'Authorization': 'Bearer {HEADER_BEARER}'}} api_key='{API_KEY}'\n"
    )
    conn = ConnectionSettings(
        url=f"http://127.0.0.1:{free_port()}", bearer_token_file=token_file, timeout=2
    )
    out = tmp_path / "scene.tar.gz"
    result = capture(
        CaptureRequest(
            out=out, connection=conn, pids=(engine.pid,), logs=(log,), native=False,
            metrics_timeout_s=5, baselines=(),
        )
    )  # fmt: skip
    files = _everything(out)
    if py_spy() is not None:
        (stacks,) = [n for n in files if n.startswith("artifacts/stacks/")]
        assert files[stacks].startswith(f"Process {engine.pid}: ")  # the command line is kept
        assert "--api-key ***" in files[stacks]
    assert "rejected ***" in files["artifacts/logs/0-engine.log"]
    shown = [*files.values(), *(p.note for p in result.parts)]
    for text in shown:
        for secret in SECRETS:
            assert secret not in text, f"{secret} leaked: {text[:2000]}"


def test_a_numeric_secret_leaves_json_artifacts_json() -> None:
    """A password of digits (here one `serve`'s fuzzing could register) masked in the text of a
    diagnosis once turned `1796616600.0` into `17966***.0`: JSON artifacts are scrubbed by
    their strings, so they still parse, their numbers intact, the secret gone from the text."""
    secret = "5566778899"
    doc = {"end": 15566778899.0, "note": f"token {secret} rejected", secret: [5566778899]}
    artifacts = {"diagnosis.json": json.dumps(doc, indent=2).encode(), "x.log": secret.encode()}
    out = scrub_artifacts(artifacts, Redactor([secret]))
    back = json.loads(out["diagnosis.json"])
    assert back == {"end": 15566778899.0, "note": "token *** rejected", "***": [5566778899]}
    assert out["x.log"] == b"***"
    # a part's .json that is not JSON is scrubbed as text, not refused
    assert scrub_artifacts({"bad.json": f"{{{secret}".encode()}, Redactor())["bad.json"] == b"{***"
