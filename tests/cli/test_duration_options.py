"""Every option that takes a length of time says DURATION in --help (issue 39): --timeout and
--deadline showed `<float>` while taking `30s`, --step and others `<str>`."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import typer

from infersight.cli import app

#: options that take a length of time wherever they appear (`--history` is one in `lab sim`,
#: a folder in `diagnose`: its default says which)
DURATION_NAMES = {
    "--timeout", "--deadline", "--window", "--rate-window", "--step", "--interval", "--for",
    "--duration", "--warmup", "--part-timeout", "--batch-latency", "--target-p99",
    "--slo-p99",
}  # fmt: skip
#: a default that reads as one: 15s, 5m, 1h30m
LOOKS_LIKE = re.compile(r"(\d+(\.\d+)?(ms|s|m|h|d|w))+")


def _commands(group: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    if hasattr(group, "commands"):
        for name, sub in group.commands.items():
            yield from _commands(sub, (*path, name))
    else:
        yield path, group


def test_every_duration_option_says_duration() -> None:
    root = typer.main.get_command(app)
    checked = 0
    for path, command in _commands(root):
        ctx = type(root).context_class(command, info_name=" ".join(path))
        for p in command.params:
            if type(p).__name__ != "TyperOption" or p.hidden or p.is_flag:
                continue
            name = p.opts[0]
            default = p.default if isinstance(p.default, str) else ""
            if name == "--baselines":
                assert p.display_type_rich(ctx=ctx) == "DURATIONS", path
            elif name in DURATION_NAMES or LOOKS_LIKE.fullmatch(default):
                assert p.display_type_rich(ctx=ctx) == "DURATION", (path, name)
                checked += 1
    assert checked > 30
