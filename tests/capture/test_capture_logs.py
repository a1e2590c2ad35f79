"""Log tails: bounded in size, cut at a line, topped up from the rotated file (plain or gzip)."""

from __future__ import annotations

import gzip
from pathlib import Path

from infersight.capture.logs import capture_logs, tail_log


def test_tail_is_bounded_and_starts_on_a_whole_line(tmp_path: Path) -> None:
    log = tmp_path / "big.log"
    log.write_text("".join(f"line {i:06d}\n" for i in range(100_000)))  # 1.2 MB
    data = tail_log(log, max_bytes=4096)
    assert 4096 - 12 <= len(data) <= 4096
    assert data.startswith(b"line ") and data.endswith(b"line 099999\n")


def test_a_just_rotated_log_is_topped_up_from_its_gzipped_predecessor(tmp_path: Path) -> None:
    log = tmp_path / "app.log"
    log.write_text("new 1\nnew 2\n")
    with gzip.open(tmp_path / "app.log.1.gz", "wt") as f:
        f.write("".join(f"old {i}\n" for i in range(10_000)))
    data = tail_log(log, max_bytes=2048).decode()
    assert len(data.encode()) <= 2048 + 100  # the marker line is the only extra
    assert "old 9999\n" in data and data.endswith("new 1\nnew 2\n")
    assert "--- end of app.log.1.gz; app.log follows ---" in data
    first = data.splitlines()[0]
    assert first.startswith("old ") and first.split()[1].isdigit()  # a whole line


def test_a_long_log_needs_no_predecessor(tmp_path: Path) -> None:
    log = tmp_path / "app.log"
    log.write_text("x" * 99 + "\n" + "y" * 5000 + "\n")
    (tmp_path / "app.log.1").write_text("old\n")
    data = tail_log(log, max_bytes=1024)
    assert b"old" not in data and b"end of" not in data


def test_an_unreadable_log_is_noted_and_the_others_kept(tmp_path: Path) -> None:
    ok = tmp_path / "ok.log"
    ok.write_text("fine\n")
    out = capture_logs([tmp_path / "gone.log", ok])
    assert out.partial
    assert out.artifacts == {"logs/1-ok.log": b"fine\n"}
    assert "gone.log: cannot be read (No such file or directory)" in out.note
