"""Standard output never starts with a blank line (issue 39): typer's --help opened with a
padded empty line, on every command and group; results, JSON and tables start with their
first line."""

from __future__ import annotations

import subprocess
import sys

import pytest
import typer

import infersight.cli as cli


def _paths(group: typer.Typer, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    out = [prefix]
    for c in group.registered_commands:
        name = c.name or (c.callback.__name__ if c.callback else "")
        out.append((*prefix, name))
    for g in group.registered_groups:
        if g.typer_instance is not None and g.name:
            out += _paths(g.typer_instance, (*prefix, g.name))
    return out


def test_every_help_starts_with_its_usage_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    paths = _paths(cli.app)
    assert len(paths) > 40
    for path in paths:
        monkeypatch.setattr(sys, "argv", ["infersight", *path, "--help"])
        with pytest.raises(SystemExit):
            cli.main()
        out = capsys.readouterr().out
        assert out.lstrip(" ").startswith("Usage: "), (path, out[:200])


def test_blank_lines_and_style_codes_before_the_first_text_are_dropped() -> None:
    from infersight.cli.stdout_guard import NoLeadingBlankLines

    class Sink:
        text = ""

        def write(self, s: str) -> int:
            Sink.text += s
            return len(s)

    out = NoLeadingBlankLines(Sink())  # type: ignore[arg-type]
    for part in ("   ", "\n\x1b[1m  \x1b[0m\n", " Usage: x", "\n\n", "  indented\n"):
        out.write(part)
    assert Sink.text == " Usage: x\n\n  indented\n"


@pytest.mark.slow
def test_a_piped_help_and_a_group_without_a_command_start_with_text() -> None:
    for args in (["--help"], ["lab"], ["capacity", "vram", "--help"]):
        r = subprocess.run(
            [sys.executable, "-c", "from infersight.cli import main; main()", *args],
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert r.stdout.strip(), (args, r.stderr)
        assert r.stdout.splitlines()[0].strip(), (args, r.stdout[:200])
