"""Write a report to a file atomically: a temporary file in the same folder, then os.replace."""

from __future__ import annotations

import io
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from rich.console import Console

from infersight.diagnose.result import Diagnosis
from infersight.frame import MetricFrame
from infersight.report.html import render_html
from infersight.report.json_report import render_json
from infersight.report.markdown import render_markdown
from infersight.report.terminal import render_terminal

Format = Literal["text", "markdown", "md", "json", "html"]
FORMATS: tuple[str, ...] = ("text", "markdown", "md", "json", "html")


def render_text(diagnosis: Diagnosis, width: int = 110) -> str:
    """The terminal report as plain text (no colour codes), for files and logs."""
    buf = io.StringIO()
    render_terminal(diagnosis, Console(file=buf, width=width, color_system=None, soft_wrap=False))
    return buf.getvalue()


def render(diagnosis: Diagnosis, fmt: str, windows: Mapping[str, MetricFrame] | None = None) -> str:
    if fmt == "text":
        return render_text(diagnosis)
    if fmt in ("markdown", "md"):
        return render_markdown(diagnosis)
    if fmt == "json":
        return render_json(diagnosis)
    if fmt == "html":
        return render_html(diagnosis, windows)
    raise ValueError(f"unknown report format {fmt!r}; use one of {', '.join(FORMATS)}")


def write_report(
    diagnosis: Diagnosis,
    path: str | os.PathLike[str],
    fmt: str,
    windows: Mapping[str, MetricFrame] | None = None,
) -> Path:
    """Render and write; readers never see a half-written file. Returns the path written."""
    text = render(diagnosis, fmt, windows)
    target = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target
