"""The `infersight` command. Thin: parse arguments, call the library, render the result."""

from __future__ import annotations

import shlex
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Annotated

import typer

from infersight.cli import (
    alerts_cmds,
    analysis_cmds,
    bench_cmds,
    bundle_cmds,
    capacity_cmds,
    capture_cmds,
    catalog_cmds,
    diagnose_cmd,
    lab_cmds,
    lab_engine_cmds,
    live_cmds,
    postmortem_cmds,
    pull_cmds,
    runbook_cmds,
    serve_cmds,
    stress_cmds,
)
from infersight.cli.common import (
    EXIT_CODES_HELP,
    EXIT_INPUT,
    EXIT_INTERNAL,
    CommandError,
    err_console,
    markup_safe,
)
from infersight.cli.connection import with_connection_options
from infersight.cli.stdout_guard import guarded

app = typer.Typer(
    name="infersight",
    help=(
        "Which layer of your AI inference service broke, and why, with the evidence.\n\n"
        "Start with `infersight demo`; point it at your Prometheus with "
        "`infersight probe --prometheus URL`."
    ),
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode="rich",
)


def _version(value: bool) -> None:
    if value:
        from importlib.metadata import PackageNotFoundError, version

        try:
            number = version("infersight")
        except PackageNotFoundError:  # run from a source tree that was never installed
            number = "(not installed)"
        sys.stdout.write(f"infersight {number}\n")
        raise typer.Exit(0)


@app.callback()
def _main(
    show_version: Annotated[
        bool,
        typer.Option(
            "--version", help="Print the version and exit.", callback=_version, is_eager=True
        ),
    ] = False,
) -> None:
    """Which layer of your AI inference service broke, and why, with the evidence."""


app.command("signals")(catalog_cmds.signals)
app.command("exporters")(catalog_cmds.exporters)
app.command("probe")(with_connection_options(pull_cmds.probe))
app.command("pull")(with_connection_options(pull_cmds.pull))
app.command("detect")(with_connection_options(analysis_cmds.detect))
app.command("diagnose")(with_connection_options(diagnose_cmd.diagnose))
app.command("capture")(with_connection_options(capture_cmds.capture))
app.command("serve")(serve_cmds.serve)
app.add_typer(bundle_cmds.app, name="bundle")
live_cmds.register(lab_cmds.app)  # lab up|down|status|fault|load: real processes
lab_cmds.app.add_typer(lab_engine_cmds.app, name="engine")  # lab engine setup|status
app.add_typer(lab_cmds.app, name="lab")
app.command("demo")(lab_cmds.demo)
app.add_typer(bench_cmds.app, name="bench")
app.add_typer(stress_cmds.app, name="stress")
app.add_typer(postmortem_cmds.app, name="postmortem")
app.add_typer(runbook_cmds.app, name="runbook")
app.add_typer(capacity_cmds.app, name="capacity")
app.add_typer(alerts_cmds.alerts_app, name="alerts")
app.add_typer(alerts_cmds.dashboards_app, name="dashboards")


def _ends_with_exit_codes(t: typer.Typer) -> None:
    """Every command's and group's --help ends with the one exit-code table."""
    t.info.epilog = EXIT_CODES_HELP
    for command in t.registered_commands:
        command.epilog = EXIT_CODES_HELP
    for group in t.registered_groups:
        group.epilog = EXIT_CODES_HELP
        if group.typer_instance is not None:
            _ends_with_exit_codes(group.typer_instance)


_ends_with_exit_codes(app)


def _user_errors() -> tuple[type[BaseException], ...]:
    """Exceptions whose message is already the one line a user should see."""
    from infersight.bundle import BundleError
    from infersight.diagnose import KBError
    from infersight.diagnose.calibrate import CalibrationError
    from infersight.exporters import CatalogError
    from infersight.runbooks import RunbookError
    from infersight.safe_write import OutputError
    from infersight.signals import UnknownSignalError
    from infersight.sources.errors import SourceError
    from infersight.sources.exposition import ExpositionError
    from infersight.sources.promjson import PromJSONError
    from infersight.userfile import UserFileError

    return (
        BundleError,
        CalibrationError,
        CatalogError,
        ExpositionError,
        KBError,
        OutputError,
        PromJSONError,
        RunbookError,
        SourceError,
        UnknownSignalError,
        UserFileError,
    )


def _crash_report(exc: BaseException) -> Path | None:
    """The traceback of an internal error, in a file a user can attach to a bug report: the
    command line and the traceback pass the redaction layer (a token given as an option, read
    from a file or quoted in an error is masked)."""
    from infersight.redact import Redactor, redact_argv

    redactor = Redactor()
    try:
        fd, name = tempfile.mkstemp(prefix=f"infersight-crash-{int(time.time())}-", suffix=".txt")
        with open(fd, "w", encoding="utf-8") as out:
            out.write(redactor.scrub_known(shlex.join(redact_argv(sys.argv))) + "\n\n")
            out.write(redactor.scrub("".join(traceback.format_exception(exc))))
        return Path(name)
    except OSError:
        return None


def _shown(message: object, patterns: bool = False) -> str:
    """An error's line as printed: markup-safe, with every secret the process knows masked
    (and, with `patterns`, anything that reads as a credential: a bug's message is not ours)."""
    from infersight.redact import Redactor

    r = Redactor()
    return markup_safe(r.scrub(str(message)) if patterns else r.scrub_known(str(message)))


def _quoted(message: object) -> str:
    """A user error as printed: its first line is the error; the lines it quotes (a process's
    log tail) follow, indented, as they were written, never as `\x0a` inside one line and
    never as lines of their own that could read as another error."""
    first, *rest = str(message).split("\n")
    quoted = [f"\n    {_shown(line)}" for line in rest if line.strip()]
    return _shown(first) + "".join(quoted)


def main() -> None:
    try:
        guarded(app)
    except CommandError as exc:
        err_console.print(f"[red]error:[/] {_quoted(exc.message)}", highlight=False, soft_wrap=True)
        sys.exit(exc.code)
    except _user_errors() as exc:
        err_console.print(f"[red]error:[/] {_quoted(exc)}", highlight=False, soft_wrap=True)
        sys.exit(EXIT_INPUT)
    except KeyboardInterrupt:
        err_console.print("interrupted")
        sys.exit(130)
    except Exception as exc:  # a bug: one line, and the details in a file to report
        where = _crash_report(exc)
        detail = f"; details in {where}" if where else ""
        err_console.print(
            f"[red]internal error:[/] {markup_safe(type(exc).__name__)}: {_shown(exc, True)}"
            f"{markup_safe(detail)} (please report it with that file)",
            highlight=False,
            soft_wrap=True,
        )
        sys.exit(EXIT_INTERNAL)
