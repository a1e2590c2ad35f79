"""What came from data never drives the terminal and is never read as rich markup: control
characters are shown as \\xNN, `[/]` stays text, in every report and every line the CLI prints."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from report_samples import incident
from rich.console import Console

from infersight.bundle import write_bundle
from infersight.diagnose.result import Diagnosis
from infersight.frame import MetricFrame
from infersight.report import render_html, render_markdown, render_terminal, render_text

#: rich markup, a colour, clear-screen and a window-title (OSC) sequence ending in BEL
EVIL = "n[/]0[bold]\x1b[31m\x1b[2J\x1b]0;pwned\x07\x9b"
CONTROL = ("\x1b", "\x07", "\x9b")


def evil() -> Diagnosis:
    d = incident()
    first = d.hypotheses[0]
    e0 = replace(first.evidence[0], instance=EVIL, statement=f"P99 up on {EVIL}")
    h0 = replace(first, evidence=(e0, *first.evidence[1:]), instances=(EVIL,))
    return replace(
        d,
        hypotheses=(h0, *d.hypotheses[1:]),
        next_actions=(f"Restart {EVIL}",),
        source={"path": EVIL},
    )


def _terminal(d: Diagnosis) -> str:
    buf = io.StringIO()
    render_terminal(d, Console(file=buf, width=200, color_system=None))
    return buf.getvalue()


@pytest.mark.parametrize(
    "render", [_terminal, render_text, render_markdown, render_html], ids=lambda f: f.__name__
)
def test_reports_show_control_characters_instead_of_sending_them(render: object) -> None:
    assert callable(render)
    text = render(evil())
    assert not any(c in text for c in CONTROL), repr(text[:200])
    assert "\\x1b" in text  # shown, not hidden
    if render in (_terminal, render_text):
        assert "n[/]0[bold]" in text  # markup stayed text


# -- the CLI's own lines ----------------------------------------------------------------------


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", "from infersight.cli import main; main()", *args],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "COLUMNS": "200"},
    )


def no_traceback_nor_control(res: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in res.stderr and "MarkupError" not in res.stderr, res.stderr
    out = res.stdout + res.stderr  # not a terminal: rich adds no colour, any ESC came from data
    assert not any(c in out for c in CONTROL), repr(out[:300])


@pytest.fixture
def markup_folder(tmp_path: Path) -> Path:
    """A folder `a[` so that `a[/]NAME` is a path holding rich's closing tag."""
    folder = tmp_path / "a["
    folder.mkdir()
    return folder


@pytest.fixture
def evil_bundle(markup_folder: Path) -> Path:
    n = 240
    values = 50 + np.random.default_rng(0).normal(0, 1, (3, n))
    values[2, 150:] += 40  # one instance stands out: it is named in findings and tables
    frame = MetricFrame(1_700_000_000.0, 15.0, n).with_series(
        "service.queue_length", ["n[/]0", "n\x1b[2J1", "n\x1b]0;pwned\x072"], values
    )
    return write_bundle(markup_folder / "]b", {"incident": frame}, {"kind": "test"})


@pytest.mark.slow
def test_detect_and_diagnose_with_hostile_instance_names(evil_bundle: Path) -> None:
    for args in (["detect"], ["diagnose"], ["diagnose", "--full"], ["diagnose", "-f", "md"]):
        res = cli(*args, str(evil_bundle))
        assert res.returncode in (0, 1), res.stderr
        no_traceback_nor_control(res)
        # the anomalous instance, named as it is (in Markdown with its markup escaped)
        named = "\\\\x1b\\]0;pwned" if "md" in args else "\\x1b]0;pwned"
        assert named in res.stdout
        if args == ["diagnose", "--full"]:  # coverage lists every instance read
            assert "n[/]0" in res.stdout


@pytest.mark.slow
def test_paths_with_markup_in_printed_lines(evil_bundle: Path, markup_folder: Path) -> None:
    out = markup_folder / "]r.md"
    res = cli("diagnose", str(evil_bundle), "-f", "md", "-o", str(out))
    no_traceback_nor_control(res)
    assert res.returncode in (0, 1) and f"wrote {out}" in res.stdout
    res = cli("diagnose", str(markup_folder / "]missing"))
    no_traceback_nor_control(res)
    assert res.returncode == 3 and str(markup_folder / "]missing") in res.stderr
