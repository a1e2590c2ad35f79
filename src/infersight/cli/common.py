"""What every command shares: the consoles, one-line errors, JSON output, exit codes."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Annotated, Any, NoReturn

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from infersight.cli.exit_codes import HELP, ExitCode
from infersight.jsonsafe import finite

console = Console()
err_console = Console(stderr=True)

# the statuses under the names the commands import them by; what each means is ExitCode's
EXIT_OK = ExitCode.OK
EXIT_FINDINGS = ExitCode.ACT
EXIT_USAGE = ExitCode.USAGE
EXIT_INPUT = ExitCode.CANNOT_JUDGE
EXIT_CANNOT_JUDGE = ExitCode.CANNOT_JUDGE
EXIT_INTERNAL = ExitCode.INTERNAL
EXIT_CODES_HELP = HELP


class CommandError(Exception):
    """A failure to report as one line; `code` is the exit status.

    `str()` is safe to print as rich markup (the CLI's error line is): what came from data is
    escaped and control characters are shown, never sent; `message` is the plain text.
    """

    def __init__(self, message: str, code: int = EXIT_INPUT) -> None:
        super().__init__(message)
        self.message = message
        self.code = code

    def __str__(self) -> str:
        return markup_safe(self.message)


def markup_safe(data: object) -> str:
    """Text from data (a path, an instance name, an error) to embed in a rich markup string:
    one line, control characters shown as \\xNN, `[` escaped."""
    from infersight.report.textsafe import clean, for_markup

    return for_markup(clean(data, one_line=True))


def fail(message: str, code: int = EXIT_INPUT) -> NoReturn:
    raise CommandError(message, code)


def cannot_judge(reason: str) -> NoReturn:
    """Stop with the one line on stderr saying that nothing can be judged, and why (exit 3)."""
    reason = reason.removeprefix("Cannot judge: ").rstrip(".")
    err_console.print(
        f"[yellow]cannot judge:[/] {markup_safe(reason)}", highlight=False, soft_wrap=True
    )
    raise typer.Exit(EXIT_CANNOT_JUDGE)


#: `--format` of the commands that print a table or JSON
FormatOpt = Annotated[str, typer.Option("--format", "-f", help="table or json.", metavar="FORMAT")]
#: the old spelling of `--format json`, kept working
JsonAliasOpt = Annotated[bool, typer.Option("--json", hidden=True, help="Same as --format json.")]


def wants_json(fmt: str, as_json: bool) -> bool:
    """Whether `--format FORMAT` (or the old `--json`) asks for JSON; any other format than
    table/text and json is a usage error."""
    if fmt not in ("table", "text", "json"):
        fail(f"--format {fmt!r}: choose table or json", EXIT_USAGE)
    return as_json or fmt == "json"


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
