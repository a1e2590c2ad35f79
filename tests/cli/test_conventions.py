"""The conventions on-call engineers bring from promtool, amtool and kubectl (issue 30):
--version, documented exit codes, one option name per idea, clock times for --at, and an
environment variable that never breaks a command that does not use it."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from infersight.bundle import write_bundle
from infersight.cli.inputs import parse_at
from infersight.frame import MetricFrame

START = 1_700_000_000.0  # 2023-11-14 22:13:20 UTC
N = 240


def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    import os

    return subprocess.run(
        [sys.executable, "-c", "from infersight.cli import main; main()", *args],
        capture_output=True,
        text=True,
        timeout=180,
        env={**os.environ, "COLUMNS": "100", **(env or {})},
    )


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    values = 50 + np.random.default_rng(0).normal(0, 1, (3, N))
    values[2, 150:] += 40
    frame = MetricFrame(START, 15.0, N).with_series("service.queue_length", ["a", "b", "c"], values)
    target = tmp_path_factory.mktemp("b") / "b.tar.gz"
    return write_bundle(target, {"incident": frame}, {"kind": "test"})


@pytest.mark.slow
def test_version() -> None:
    res = cli("--version")
    assert res.returncode == 0 and res.stdout.startswith("infersight ")


@pytest.mark.slow
def test_help_documents_every_exit_code() -> None:
    for args in (["--help"], ["diagnose", "--help"], ["detect", "--help"]):
        text = " ".join(cli(*args).stdout.split())
        assert "0 nothing to act on" in text and "1 something to act on" in text, args
        assert "2 usage error" in text and "3 cannot judge: input or server error" in text, args


@pytest.mark.slow
def test_exit_codes(bundle: Path, tmp_path: Path) -> None:
    assert cli("diagnose", str(bundle)).returncode == 1  # findings
    assert cli("diagnose", str(bundle), "--format", "xml").returncode == 2  # usage
    missing = cli("diagnose", str(tmp_path / "nope.tar.gz"))
    assert missing.returncode == 3 and "does not exist" in missing.stderr  # input
    broken = tmp_path / "broken.tar.gz"
    broken.write_bytes(b"not a bundle")
    assert cli("diagnose", str(broken)).returncode == 3
    assert cli("signals", "--mappings", str(tmp_path / "nowhere")).returncode == 3


@pytest.mark.slow
def test_an_environment_variable_never_breaks_a_command_that_does_not_use_it(
    bundle: Path,
) -> None:
    env = {"INFERSIGHT_PROMETHEUS": "http://127.0.0.1:1"}
    for command in ("diagnose", "detect"):
        res = cli(command, str(bundle), env=env)
        assert res.returncode == 1, res.stderr  # read the bundle, found the anomaly
    # with no bundle, the variable is the server to read (here: unreachable, so exit 3)
    res = cli("detect", "--deadline", "2", env=env)
    assert res.returncode == 3 and "127.0.0.1:1" in res.stderr, res.stderr
    both = cli("diagnose", str(bundle), "-p", "http://127.0.0.1:1")
    assert both.returncode == 2 and "exactly one" in both.stderr
    # a deadline is for a server: a bad one does not touch a bundle, and is one line where used
    bad = {"INFERSIGHT_DEADLINE": "abc"}
    assert cli("diagnose", str(bundle), env=bad).returncode == 1
    used = cli("detect", "-p", "http://127.0.0.1:1", env=bad)
    assert used.returncode == 2 and "INFERSIGHT_DEADLINE='abc'" in used.stderr, used.stderr
    assert len(used.stderr.strip().splitlines()) == 1
    res = cli("detect", "-p", "http://127.0.0.1:1", "--deadline", "2s")
    assert res.returncode == 3, res.stderr


def test_at_takes_a_clock_time() -> None:
    now = datetime(2026, 12, 4, 17, 25, tzinfo=UTC).timestamp()
    today = datetime(2026, 12, 4, 2, 30, tzinfo=UTC).timestamp()
    assert parse_at("02:30Z", anchor=now) == today
    assert parse_at("2:30", anchor=now) == today
    assert parse_at("02:30:15z", anchor=now) == today + 15
    # later today than now: yesterday's
    assert parse_at("23:10Z", anchor=now) == today - 3 * 3600 - 20 * 60
    assert parse_at("2026-12-01T00:00:00Z") == datetime(2026, 12, 1, tzinfo=UTC).timestamp()
    with pytest.raises(ValueError):
        parse_at("25:61")


@pytest.mark.slow
def test_at_clock_time_on_a_bundle_is_the_last_such_time_in_it(bundle: Path) -> None:
    res = cli("diagnose", str(bundle), "--at", "22:50Z", "-f", "json")
    # 3: the quiet stretch up to 22:50 has no baseline to judge it by (the report is still out)
    assert res.returncode == 3 and res.stderr.startswith("cannot judge: no"), res.stderr
    assert datetime.fromtimestamp(json.loads(res.stdout)["end"], UTC).strftime("%H:%M") == "22:50"


@pytest.mark.slow
def test_format_and_out_are_spelt_the_same_in_every_command(bundle: Path) -> None:
    for args in (["signals"], ["exporters"], ["lab", "scenarios"], ["bundle", "inspect"]):
        extra = [str(bundle)] if args[0] == "bundle" else []
        for spelling in (["-f", "json"], ["--format", "json"], ["--json"]):
            res = cli(*args, *extra, *spelling)
            assert res.returncode == 0, (args, spelling, res.stderr)
            json.loads(res.stdout)
        assert cli(*args, *extra, "-f", "yaml").returncode == 2
    # capture too: the format spelt as everywhere, --at as a clock time (the host part alone)
    out = Path(str(bundle)).parent / "scene.tar.gz"
    res = cli("capture", "-o", str(out), "--at", "02:30Z", "-f", "json")
    assert res.returncode == 3, res.stderr  # written; with no metrics its diagnosis cannot judge
    assert json.loads(res.stdout)["bundle"] == str(out)
    assert cli("capture", "-o", str(out) + "2", "-f", "yaml").returncode == 2
    helps = {c: cli(*c.split(), "--help").stdout for c in ("pull", "diagnose", "lab sim")}
    for command, text in helps.items():
        assert "--out" in text and "-o" in text, command
    assert "--window" in helps["pull"] and "--since" not in helps["pull"]


@pytest.mark.slow
def test_diagnose_brief_and_full(bundle: Path) -> None:
    brief = cli("diagnose", str(bundle), "--brief")
    assert brief.returncode == 1 and len(brief.stdout.splitlines()) <= 12
    short = cli("diagnose", str(bundle)).stdout
    long = cli("diagnose", str(bundle), "-v").stdout
    assert len(long.splitlines()) > len(short.splitlines())
    assert "Coverage per layer" in long and "Coverage per layer" not in short


@pytest.mark.slow
def test_durations_carry_their_unit(tmp_path: Path) -> None:
    text = " ".join(cli("lab", "sim", "--help").stdout.split())
    assert "--duration" in text and "3h" in text and "--history" in text
    res = cli("lab", "sim", "-s", "healthy", "-o", str(tmp_path / "x"), "--duration", "3 parsecs")
    assert res.returncode == 2 and "--duration" in res.stderr
