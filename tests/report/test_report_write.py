"""write_report: every format, atomically, and nothing left behind on failure."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from report_samples import incident, windows

from infersight.diagnose.result import Diagnosis
from infersight.report import FORMATS, write_report
from infersight.runbooks.choose import for_diagnosis


@pytest.mark.parametrize("fmt", FORMATS)
def test_writes_each_format(tmp_path: Path, fmt: str) -> None:
    path = write_report(incident(), tmp_path / f"r.{fmt}", fmt, windows())
    text = path.read_text("utf-8")
    assert "Vector DB index swapped out of RAM" in text
    assert list(tmp_path.iterdir()) == [path]
    if fmt == "json":
        assert Diagnosis.from_dict(json.loads(text)) == for_diagnosis(incident())


def test_replaces_an_existing_file_whole(tmp_path: Path) -> None:
    path = tmp_path / "r.md"
    path.write_text("old report " * 10_000)
    write_report(incident(), path, "md")
    assert "old report" not in path.read_text()


def test_unknown_format_writes_nothing(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown report format 'pdf'"):
        write_report(incident(), tmp_path / "r.pdf", "pdf")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("existing", [False, True])
def test_failed_write_leaves_no_temp_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, existing: bool
) -> None:
    target = tmp_path / "r.json"
    if existing:
        target.write_text("old")

    def boom(*_: object) -> None:
        raise OSError("disk full")

    # the disk fills while the report is flushed (new file), or at the rename (old one there)
    monkeypatch.setattr("os.replace" if existing else "os.fsync", boom)
    with pytest.raises(OSError, match="disk full"):
        write_report(incident(), target, "json")
    monkeypatch.undo()
    assert list(tmp_path.iterdir()) == ([target] if existing else [])
    if existing:
        assert target.read_text() == "old"
