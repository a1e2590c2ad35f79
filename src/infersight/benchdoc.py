"""Write one section of a benchmarks page (docs/benchmarks.md) in place.

Each benchmark owns the text between `<!-- bench:NAME -->` and `<!-- /bench:NAME -->`; other
sections are kept. The file is written to a temp name and renamed, so a crash loses nothing.
"""

from __future__ import annotations

import os
import platform
import re
from datetime import UTC, datetime
from pathlib import Path

from infersight import userfile
from infersight.safe_write import write_text

#: docs/benchmarks.md of a source checkout (src/infersight/benchdoc.py → ../../docs)
BENCHMARKS_MD = Path(__file__).resolve().parents[2] / "docs" / "benchmarks.md"
_HEADER = (
    "# Benchmarks\n\n"
    "Each section is written by the benchmark named in it, with the command that reproduces it.\n"
    "Times are wall-clock on a shared machine: compare ratios within one run, not across runs.\n"
)


def machine() -> str:
    """One line naming the machine, so figures are read against what produced them."""
    cores = os.cpu_count() or 0
    mem = ""
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            kib = int(f.readline().split()[1])
        mem = f", {kib / 2**20:.0f} GiB RAM"
    except (OSError, ValueError, IndexError):
        pass
    return f"{platform.machine()}, {cores} cores{mem}, Python {platform.python_version()}"


def write_section(
    name: str, title: str, command: str, body: str, path: Path = BENCHMARKS_MD
) -> None:
    """Replace (or append) the section NAME with TITLE, the reproducing COMMAND and BODY."""
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    section = (
        f"<!-- bench:{name} -->\n## {title}\n\n"
        f"Reproduce: `{command}`  \nMachine: {machine()}; run {stamp}.\n\n"
        f"{body.rstrip()}\n<!-- /bench:{name} -->"
    )
    text = userfile.read_text(path) if path.exists() else _HEADER
    pattern = re.compile(
        rf"<!-- bench:{re.escape(name)} -->.*?<!-- /bench:{re.escape(name)} -->", re.S
    )
    text = (
        pattern.sub(lambda _m: section, text)
        if pattern.search(text)
        else f"{text.rstrip()}\n\n{section}\n"
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    # the project's one safe writer: readable (0644), never half-written, never through a link
    write_text(path, text if text.endswith("\n") else text + "\n")
