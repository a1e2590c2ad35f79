"""Reading a user's rule file: a regular, UTF-8 file of a rule's size, refused in one line
otherwise, and never blocking on a FIFO or a device named *.yaml."""

from __future__ import annotations

import os
import stat
from pathlib import Path


class RuleFileError(ValueError):
    """A rule file that cannot be read as one; the message names the file."""


#: a rule is a page of YAML: anything larger is not a rule file
MAX_RULE_BYTES = 1 << 20


def read_rule_file(path: Path) -> str:
    """A rule file's text; a folder, a FIFO or a device named *.yaml is refused without
    blocking, as is a file that is not UTF-8 or larger than any rule."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as exc:
        raise RuleFileError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise RuleFileError(f"{path}: not a regular file; a rule is a YAML file")
    with os.fdopen(fd, "rb") as fh:
        data = fh.read(MAX_RULE_BYTES + 1)
    if len(data) > MAX_RULE_BYTES:
        raise RuleFileError(f"{path}: larger than {MAX_RULE_BYTES} bytes; not a rule file")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise RuleFileError(f"{path}: not UTF-8 text; is it a YAML rule file?") from None
