"""Write a report to a file through `safe_write`: never over anything but a regular file, never
half-written. A format is named, or inferred from the file's suffix (`format_for`)."""

from __future__ import annotations

import io
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Literal

from rich.console import Console

from infersight.diagnose.result import Diagnosis
from infersight.frame import MetricFrame
from infersight.report.firstscreen import render_brief
from infersight.report.html import render_html
from infersight.report.json_report import render_json
from infersight.report.links import Links
from infersight.report.markdown import render_markdown
from infersight.report.seen_before import PastIncident
from infersight.report.terminal import render_terminal
from infersight.safe_write import write_text

Format = Literal["text", "markdown", "md", "brief", "json", "html"]
FORMATS: tuple[str, ...] = ("text", "markdown", "md", "brief", "json", "html")
#: what a file's suffix says its format is; any other suffix gets plain text
SUFFIX_FORMATS = {".json": "json", ".md": "md", ".markdown": "md", ".html": "html", ".htm": "html"}


def format_for(path: str | os.PathLike[str], fmt: str | None = None) -> str:
    """The format to write `path` in: `fmt` when given (`terminal` meaning plain text), else
    from the suffix (.json, .md/.markdown, .html/.htm), else plain text."""
    if fmt == "terminal":
        return "text"
    if fmt is not None:
        return fmt
    return SUFFIX_FORMATS.get(Path(path).suffix.lower(), "text")


def render_text(
    diagnosis: Diagnosis,
    width: int = 110,
    full: bool = False,
    seen: Sequence[PastIncident] | None = None,
) -> str:
    """The terminal report as plain text (no colour codes), for files and logs."""
    buf = io.StringIO()
    console = Console(file=buf, width=width, color_system=None, soft_wrap=False)
    render_terminal(diagnosis, console, full=full, seen=seen)
    return buf.getvalue()


def render(
    diagnosis: Diagnosis,
    fmt: str,
    windows: Mapping[str, MetricFrame] | None = None,
    full: bool = False,
    links: Links | None = None,
    seen: Sequence[PastIncident] | None = None,
) -> str:
    """The report in `fmt`; text and Markdown are the first screen unless `full`; JSON and HTML
    always hold everything (HTML folds what was ruled out). `seen`: the past incidents like
    this one, when a postmortem library was searched (every format shows them)."""
    if fmt in ("text", "terminal"):
        return render_text(diagnosis, full=full, seen=seen)
    if fmt in ("markdown", "md"):
        return render_markdown(diagnosis, full=full, seen=seen, links=links)
    if fmt == "brief":
        return render_brief(diagnosis, seen)
    if fmt == "json":
        return render_json(diagnosis, links=links, seen=seen)
    if fmt == "html":
        from infersight.runbooks.choose import for_diagnosis

        # the HTML names each root's runbook as the diagnosis holds it: the one for the stack
        return render_html(for_diagnosis(diagnosis), windows, links=links, seen=seen)
    raise ValueError(f"unknown report format {fmt!r}; use one of {', '.join(FORMATS)}")


def write_report(
    diagnosis: Diagnosis,
    path: str | os.PathLike[str],
    fmt: str,
    windows: Mapping[str, MetricFrame] | None = None,
    full: bool = False,
    links: Links | None = None,
    seen: Sequence[PastIncident] | None = None,
) -> Path:
    """Render and write; readers never see a half-written file. Returns the path written.

    Raises `safe_write.OutputError` for a target that is not a regular file (a symlink, device,
    FIFO or folder) or a folder that takes no new file.
    """
    text = render(diagnosis, fmt, windows, full=full, links=links, seen=seen)
    return write_text(path, text)
