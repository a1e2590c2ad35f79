"""What every command shares: the consoles, one-line errors, JSON output, exit codes."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, NoReturn

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from infersight.jsonsafe import finite

console = Console()
err_console = Console(stderr=True)

EXIT_OK = 0
EXIT_FINDINGS = 1  # findings, or a failure the user must look at
EXIT_USAGE = 2


class CommandError(Exception):
    """A failure to report as one line; `code` is the exit status."""

    def __init__(self, message: str, code: int = EXIT_FINDINGS) -> None:
        super().__init__(message)
        self.code = code


def fail(message: str, code: int = EXIT_FINDINGS) -> NoReturn:
    raise CommandError(message, code)


def print_json(data: Any) -> None:
    """Machine-readable output on stdout, nothing else mixed in."""
    text = json.dumps(finite(data), indent=2, default=str, allow_nan=False)
    sys.stdout.write(text + "\n")


@contextmanager
def progress_bar(label: str, enabled: bool = True) -> Iterator[Callable[[int, int], None]]:
    """A progress bar on stderr; yields `update(done, total)`. Quiet when disabled (--json)."""
    if not enabled:
        yield lambda _done, _total: None
        return
    with Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err_console,
        transient=True,
    ) as bar:
        task = bar.add_task(label, total=None)

        def update(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        yield update
