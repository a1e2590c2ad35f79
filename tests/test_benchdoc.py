"""A benchmark's section is written in place: other sections kept, the page stays readable."""

from __future__ import annotations

import stat
from pathlib import Path

from infersight.benchdoc import write_section


def test_a_section_is_replaced_and_the_page_stays_readable(tmp_path: Path) -> None:
    page = tmp_path / "benchmarks.md"
    page.write_text("# Benchmarks\n\n<!-- bench:a -->old<!-- /bench:a -->\n\nkept\n")
    page.chmod(0o644)
    write_section("a", "A", "python -m bench.a", "new body", path=page)
    text = page.read_text()
    assert "new body" in text and "old" not in text and "kept" in text
    # a temp file's 0600 would hide the page from everyone but its writer
    assert stat.S_IMODE(page.stat().st_mode) == 0o644
    assert [p.name for p in tmp_path.iterdir()] == ["benchmarks.md"]
