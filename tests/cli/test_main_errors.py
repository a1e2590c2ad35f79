"""main(): every failure is one line; a bug leaves its traceback in a file, not on screen."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import infersight.cli as cli

INFERSIGHT = str(Path(sys.executable).with_name("infersight"))


def _boom() -> None:
    raise RuntimeError("unexpected [/] state")


def test_an_internal_error_is_one_line_and_a_file(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    monkeypatch.setattr(cli, "app", _boom)
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr("tempfile.tempdir", None)
    with pytest.raises(SystemExit) as exit_:
        cli.main()
    assert exit_.value.code == 4  # a bug: neither findings (1) nor bad input (3)
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.count("\n") == 1
    assert "internal error: RuntimeError: unexpected [/] state" in err
    (report,) = tmp_path.glob("infersight-crash-*.txt")
    assert "Traceback" in report.read_text() and "_boom" in report.read_text()


@pytest.mark.slow
def test_markup_in_a_user_error_is_printed_not_parsed(tmp_path: Path) -> None:
    missing = tmp_path / "no[/]such.tar.gz"
    run = subprocess.run(
        [INFERSIGHT, "bundle", "inspect", str(missing)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode != 0 and "Traceback" not in run.stderr
    assert "no[/]such" in run.stderr


@pytest.mark.slow
def test_stdout_that_cannot_be_written_is_one_line() -> None:
    with open("/dev/full", "w") as full:
        run = subprocess.run(
            [INFERSIGHT, "signals"],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
        )
    assert run.returncode == 3 and "Traceback" not in run.stderr  # an output error, not findings
    assert "cannot write to standard output" in run.stderr


def test_the_crash_file_and_the_line_hold_no_secret(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    token_file = tmp_path / "token"
    token_file.write_text("crash-file-token-8c7b6a\n")

    def boom() -> None:
        from infersight.sources.httpconfig import read_secret_file

        token = read_secret_file(token_file, "--bearer-token-file")  # now known to the process
        raise RuntimeError(f"unexpected answer to {token}")

    argv = [
        "infersight", "probe", "-p", "http://alice:crash-url-pw@h:9090", "--bearer-token",
        "crash-inline-token", "-H", "X-Api-Key: crash-header-key", "--basic-auth", "bob:crash-pw",
    ]  # fmt: skip
    monkeypatch.setattr(sys, "argv", argv)
    monkeypatch.setattr(cli, "app", boom)
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr("tempfile.tempdir", None)
    with pytest.raises(SystemExit):
        cli.main()
    err = capsys.readouterr().err
    (report,) = tmp_path.glob("infersight-crash-*.txt")
    text = report.read_text()
    assert text.startswith("infersight probe -p 'http://***@h:9090' --bearer-token '***' -H")
    assert "Traceback" in text and "boom" in text
    for secret in ("crash-url-pw", "crash-inline-token", "crash-header-key", "crash-pw",
                   "crash-file-token-8c7b6a"):  # fmt: skip
        assert secret not in text and secret not in err, secret
    assert "unexpected answer to ***" in err


def test_a_bundle_whose_source_reads_as_markup_is_shown_as_typed(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from infersight.bundle import write_bundle
    from infersight.frame import MetricFrame

    frame = MetricFrame(1_700_000_000.0, 15.0, 8).with_series(
        "service.queue_length", ["node-[/]"], [[1.0] * 8]
    )
    bundle = write_bundle(
        tmp_path / "b.tar.gz",
        {"incident": frame},
        {"kind": "capture", "url": "http://h/[/]", "scope": '{"team": "[bold]ml[/]"}'},
        missing={"service.error_rate": "no series [/] here"},
        artifacts={"logs/0-[red].log": b"x\n"},
    )
    monkeypatch.setattr(sys, "argv", ["infersight", "bundle", "inspect", str(bundle)])
    with pytest.raises(SystemExit) as exit_:
        cli.main()
    out = " ".join(capsys.readouterr().out.split())  # as typed, wherever the lines wrap
    assert exit_.value.code == 0
    assert "url=http://h/[/]" in out and '"team": "[bold]ml[/]"' in out
    assert "no series [/] here" in out and "logs/0-[red].log" in out


def test_an_error_quoting_a_log_prints_its_lines_not_escapes(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`lab up` quoting Redis's log printed one line full of literal `\\x0a` (issue 39): the
    error stays the first line, the quoted lines follow indented, control characters in them
    still shown, never sent."""
    from infersight.cli.common import CommandError

    def boom() -> None:
        raise CommandError(
            "redis exited before it was ready; its log ends:\n\n*** FATAL CONFIG FILE ERROR ***\n"
            ">>> 'dir \"lab/redis\"'\nerror: forged\x1b[2J"
        )

    monkeypatch.setattr(cli, "app", boom)
    with pytest.raises(SystemExit) as exit_:
        cli.main()
    assert exit_.value.code == 3
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == "error: redis exited before it was ready; its log ends:"
    assert lines[1:] == [
        "    *** FATAL CONFIG FILE ERROR ***",
        "    >>> 'dir \"lab/redis\"'",
        "    error: forged\\x1b[2J",
    ]
