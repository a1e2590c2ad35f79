"""write_report: every format, atomically, and nothing left behind on failure."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from report_samples import incident, windows

from infersight.diagnose.result import Diagnosis
from infersight.report import FORMATS, write_report


@pytest.mark.parametrize("fmt", FORMATS)
def test_writes_each_format(tmp_path: Path, fmt: str) -> None:
    path = write_report(incident(), tmp_path / f"r.{fmt}", fmt, windows())
    text = path.read_text("utf-8")
    assert "Vector DB index swapped out of RAM" in text
    assert list(tmp_path.iterdir()) == [path]
    if fmt == "json":
        assert Diagnosis.from_dict(json.loads(text)) == incident()


def test_replaces_an_existing_file_whole(tmp_path: Path) -> None:
    path = tmp_path / "r.md"
    path.write_text("old report " * 10_000)
    write_report(incident(), path, "md")
    assert "old report" not in path.read_text()


def test_unknown_format_writes_nothing(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown report format 'pdf'"):
        write_report(incident(), tmp_path / "r.pdf", "pdf")
    assert list(tmp_path.iterdir()) == []


def test_failed_write_leaves_no_temp_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(src: str, dst: str) -> None:
        raise OSError("disk full")

    monkeypatch.setattr("infersight.report.write.os.replace", boom)
    with pytest.raises(OSError, match="disk full"):
        write_report(incident(), tmp_path / "r.json", "json")
    assert list(tmp_path.iterdir()) == []
