"""Every command that reads a file a user names goes through the one bounded reader: each is
run on /dev/zero or a FIFO in a child process with a deadline and a memory ceiling, so a
regression fails instead of hanging or filling the machine."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

ZERO = Path("/dev/zero")
NOWHERE, TLS_NOWHERE = "http://127.0.0.1:9", "https://127.0.0.1:9"  # never reached


def _ceiling() -> None:  # pragma: no cover - runs in the child
    """A regression that reads /dev/zero fails at 4 GiB instead of taking the machine."""
    resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", "from infersight.cli import main; main()", *args],
        capture_output=True,
        text=True,
        timeout=90,  # a FIFO read blocking forever fails the test here instead of hanging it
        stdin=subprocess.DEVNULL,
        cwd=cwd,
        preexec_fn=_ceiling,
        env={**os.environ, "COLUMNS": "200", "INFERSIGHT_PROMETHEUS": ""},
    )


CASES = {
    "serve --config /dev/zero": ["serve", "--config", "ZERO"],
    "serve --config FIFO": ["serve", "--config", "FIFO"],
    "--http.config.file /dev/zero": [
        "probe", "-p", NOWHERE, "--http.config.file", "ZERO"
    ],
    "--bearer-token-file FIFO": ["probe", "-p", NOWHERE, "--bearer-token-file", "FIFO"],
    "--alert FIFO": ["diagnose", "--alert", "FIFO", "-p", NOWHERE],
    "--mappings link to /dev/zero": ["exporters", "--mappings", "MAPPINGS"],
    "capacity batch /dev/zero": ["capacity", "batch", "ZERO"],
    "stress compare /dev/zero": ["stress", "compare", "ZERO", "ZERO"],
    "--ca-file FIFO": ["probe", "-p", TLS_NOWHERE, "--ca-file", "FIFO"],
    "postmortem new --from FIFO.json": ["postmortem", "new", "--from", "REPORT", "-o", "lib"],
    "runbook list --dir with a FIFO": ["runbook", "list", "--dir", "BOOKS"],
}  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES)
def test_commands_refuse_special_files_in_one_line(tmp_path: Path, case: str) -> None:
    named = {"ZERO": str(ZERO)}
    for name, path in [("FIFO", "pipe"), ("REPORT", "report.json"), ("BOOKS", "books/fix.yaml")]:
        (tmp_path / path).parent.mkdir(exist_ok=True)
        os.mkfifo(tmp_path / path)
        named[name] = str(tmp_path / path.split("/")[0])
    (tmp_path / "mappings").mkdir()
    (tmp_path / "mappings" / "zero.yaml").symlink_to(ZERO)
    named["MAPPINGS"] = str(tmp_path / "mappings")
    r = _cli(*[named.get(a, a) for a in CASES[case]], cwd=tmp_path)
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert r.returncode in (2, 3), (r.returncode, r.stderr[-2000:])
    assert len(lines) == 1 and "not a regular file" in lines[0], r.stderr[-2000:]
    assert "Traceback" not in r.stderr
