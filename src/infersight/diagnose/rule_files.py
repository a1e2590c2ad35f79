"""Reading a user's rule file (or runbook): through the one reader of user-named files, so a
folder, a FIFO or a device named *.yaml is refused in one line without blocking, as is a file
that is not UTF-8 or larger than `Limits.file_bytes`."""

from __future__ import annotations

from pathlib import Path

from infersight import userfile


class RuleFileError(ValueError):
    """A rule file that cannot be read as one; the message names the file."""


def read_rule_file(path: Path) -> str:
    """A rule file's text; RuleFileError (one line naming the file) when it cannot be one."""
    try:
        return userfile.read_text(path)
    except userfile.UserFileError as exc:
        raise RuleFileError(str(exc)) from None
