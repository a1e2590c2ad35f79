"""Log tails: bounded in size, cut at a line, topped up from the rotated file (plain or gzip);
a log or rotated file that is a link is refused, never followed."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from infersight.bundle import read_bundle
from infersight.capture import CAPTURE_ARTIFACT, CaptureRequest, capture
from infersight.capture.logs import capture_logs, tail_log


def test_tail_is_bounded_and_starts_on_a_whole_line(tmp_path: Path) -> None:
    log = tmp_path / "big.log"
    log.write_text("".join(f"line {i:06d}\n" for i in range(100_000)))  # 1.2 MB
    data = tail_log(log, max_bytes=4096).data
    assert 4096 - 12 <= len(data) <= 4096
    assert data.startswith(b"line ") and data.endswith(b"line 099999\n")


def test_a_just_rotated_log_is_topped_up_from_its_gzipped_predecessor(tmp_path: Path) -> None:
    log = tmp_path / "app.log"
    log.write_text("new 1\nnew 2\n")
    with gzip.open(tmp_path / "app.log.1.gz", "wt") as f:
        f.write("".join(f"old {i}\n" for i in range(10_000)))
    data = tail_log(log, max_bytes=2048).data.decode()
    assert len(data.encode()) <= 2048 + 100  # the marker line is the only extra
    assert "old 9999\n" in data and data.endswith("new 1\nnew 2\n")
    assert "--- end of app.log.1.gz; app.log follows ---" in data
    first = data.splitlines()[0]
    assert first.startswith("old ") and first.split()[1].isdigit()  # a whole line


def test_a_long_log_needs_no_predecessor(tmp_path: Path) -> None:
    log = tmp_path / "app.log"
    log.write_text("x" * 99 + "\n" + "y" * 5000 + "\n")
    (tmp_path / "app.log.1").write_text("old\n")
    data = tail_log(log, max_bytes=1024).data
    assert b"old" not in data and b"end of" not in data


def test_an_unreadable_log_is_noted_and_the_others_kept(tmp_path: Path) -> None:
    ok = tmp_path / "ok.log"
    ok.write_text("fine\n")
    out = capture_logs([tmp_path / "gone.log", ok])
    assert out.partial
    assert out.artifacts == {"logs/1-ok.log": b"fine\n"}
    assert "gone.log: cannot be read (No such file or directory)" in out.note


SHADOW = "root:$6$not-really-a-hash:19000:0:99999:7:::\n"  # a stand-in for /etc/shadow


def _shadow(tmp_path: Path) -> Path:
    secret = tmp_path / "elsewhere" / "shadow"
    secret.parent.mkdir()
    secret.write_text(SHADOW)
    return secret


def test_a_log_that_is_a_link_is_refused_in_one_line_and_the_capture_goes_on(
    tmp_path: Path,
) -> None:
    link = tmp_path / "logs" / "vllm.log"
    link.parent.mkdir()
    link.symlink_to(_shadow(tmp_path))
    ok = tmp_path / "logs" / "api.log"
    ok.write_text("api up\n")
    result = capture(CaptureRequest(out=tmp_path / "scene.tar.gz", logs=(link, ok)))
    bundle = read_bundle(result.path)
    assert all(SHADOW.encode() not in bundle.read_artifact(n) for n in bundle.artifact_names())
    assert bundle.read_artifact("logs/1-api.log") == b"api up\n"
    why = f"{link}: a symbolic link, not a regular file: not followed (give the file itself)"
    record = json.loads(bundle.read_artifact(CAPTURE_ARTIFACT))
    (logs,) = [p for p in record["parts"] if p["name"] == "logs"]
    assert logs["status"] == "partial" and why in logs["note"]
    assert why in (bundle.manifest.notes or "")
    assert bundle.manifest.source["capture_failed"] == "logs"


def test_a_rotated_file_that_is_a_link_is_refused_and_the_log_kept(tmp_path: Path) -> None:
    shadow = _shadow(tmp_path)
    for rotated in ("app.log.1", "app.log.1.gz"):
        folder = tmp_path / rotated
        folder.mkdir()
        log = folder / "app.log"
        log.write_text("just rotated\n")
        (folder / rotated).symlink_to(shadow)
        out = capture_logs([log])
        assert out.artifacts == {"logs/0-app.log": b"just rotated\n"}
        assert out.partial
        assert f"{folder / rotated}: a symbolic link, not a regular file" in out.note


def test_the_only_log_a_link_fails_the_part_with_the_reason(tmp_path: Path) -> None:
    link = tmp_path / "vllm.log"
    link.symlink_to(_shadow(tmp_path))
    result = capture(CaptureRequest(out=tmp_path / "scene.tar.gz", logs=(link,)))
    (logs,) = [p for p in result.parts if p.name == "logs"]
    assert logs.status == "failed" and logs.note.startswith(f"{link}: a symbolic link")
    bundle = read_bundle(result.path)
    assert not [n for n in bundle.artifact_names() if n.startswith("logs/")]


def test_a_damaged_rotated_file_is_named_not_dropped_in_silence(tmp_path: Path) -> None:
    log = tmp_path / "app.log"
    log.write_text("new\n")
    (tmp_path / "app.log.1.gz").write_bytes(b"not gzip at all")
    out = capture_logs([log])
    assert out.artifacts == {"logs/0-app.log": b"new\n"} and out.partial
    assert f"{tmp_path / 'app.log.1.gz'}: cannot be read" in out.note
