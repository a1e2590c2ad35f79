"""What a command's exit status means: one table for every command (docs/cli.md).

A script or a pager hook reads the status before any text: `detect` and `diagnose` on the same
window answer alike, and a command that could not judge never says "nothing to act on".

    from infersight.cli.exit_codes import ExitCode, verdict
    raise typer.Exit(verdict(diagnosis.healthy, diagnosis.judged))
"""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    """The exit statuses; `MEANING` says each one in words."""

    #: nothing to act on: the command did what it was asked and found nothing wrong
    OK = 0
    #: something to act on: findings (a root cause, an anomaly that makes the window unhealthy,
    #: an instance at risk), a load test past its SLO, a check or a runbook that did not pass
    ACT = 1
    #: the command line itself is wrong: nothing was read or run
    USAGE = 2
    #: cannot judge: a file missing or damaged, a server unreachable or failing, a lab that
    #: would not start, or too little could be read to say whether anything is wrong (never
    #: reported as "nothing to act on")
    CANNOT_JUDGE = 3
    #: a bug in infersight; the traceback is in a file to report
    INTERNAL = 4


MEANING: dict[ExitCode, str] = {
    ExitCode.OK: "nothing to act on",
    ExitCode.ACT: "something to act on (the output says what)",
    ExitCode.USAGE: "usage error",
    ExitCode.CANNOT_JUDGE: (
        "cannot judge: input or server error, or too little data to say (never an all-clear)"
    ),
    ExitCode.INTERNAL: "internal error (a bug; the traceback is in a file)",
}

#: the table as every command's --help ends with it (and the README states it)
HELP = "Exit codes: " + "; ".join(f"{int(c)} {m}" for c, m in MEANING.items()) + "."


def verdict(healthy: bool, judged: bool = True) -> ExitCode:
    """The status of a judgement: cannot judge (3) before anything else, then healthy (0) or
    something to act on (1)."""
    if not judged:
        return ExitCode.CANNOT_JUDGE
    return ExitCode.OK if healthy else ExitCode.ACT
