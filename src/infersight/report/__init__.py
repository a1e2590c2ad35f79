"""Reports of a Diagnosis: terminal (rich), Markdown, JSON and one self-contained HTML file.

Renderers read only a `Diagnosis` (and, for the HTML plots, the frames it was computed on).
"""

from infersight.report.html import render_html
from infersight.report.json_report import diagnosis_document, diagnosis_schema, render_json
from infersight.report.markdown import render_markdown
from infersight.report.terminal import render_terminal
from infersight.report.write import FORMATS, Format, render, render_text, write_report
from infersight.units import format_value

__all__ = [
    "FORMATS",
    "Format",
    "diagnosis_document",
    "diagnosis_schema",
    "format_value",
    "render",
    "render_html",
    "render_json",
    "render_markdown",
    "render_terminal",
    "render_text",
    "write_report",
]
