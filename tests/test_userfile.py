"""One bounded reader for every file a user names: a FIFO, a device, a socket or a folder is
refused in one line without blocking, and a file over the cap is refused naming the cap and how
to raise it (the commands that read one: tests/cli/test_named_files.py)."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from infersight import userfile
from infersight.limits import Limits

ZERO = Path("/dev/zero")


def test_a_regular_file_is_read_whole(tmp_path: Path) -> None:
    f = tmp_path / "a.yaml"
    f.write_bytes(b"x: 1\n" * 1000)
    assert userfile.read_bytes(f) == b"x: 1\n" * 1000
    assert userfile.read_text(f, "--config") == "x: 1\n" * 1000
    link = tmp_path / "link.yaml"  # a mounted secret is a symlink: followed to a regular file
    link.symlink_to(f)
    assert userfile.read_text(link) == "x: 1\n" * 1000


def _special(tmp_path: Path, kind: str) -> Path:
    if kind == "fifo":
        os.mkfifo(tmp_path / "pipe")  # no writer: a blocking open would wait forever
        return tmp_path / "pipe"
    if kind == "folder":
        (tmp_path / "dir.yaml").mkdir()
        return tmp_path / "dir.yaml"
    if kind == "link to /dev/zero":
        (tmp_path / "zero.yaml").symlink_to(ZERO)
        return tmp_path / "zero.yaml"
    return ZERO


@pytest.mark.parametrize("kind", ["fifo", "/dev/zero", "folder", "link to /dev/zero"])
def test_what_is_not_a_regular_file_is_refused_without_blocking(tmp_path: Path, kind: str) -> None:
    path = _special(tmp_path, kind)
    with pytest.raises(userfile.UserFileError) as err:
        userfile.read_bytes(path, "--config")
    line = str(err.value)
    assert "\n" not in line and line.startswith(f"--config {path}: is ")
    assert ("a folder" if kind == "folder" else "not a regular file") in line


def test_a_socket_is_refused_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "s.sock"
    with socket.socket(socket.AF_UNIX) as s:
        s.bind(str(path))
        with pytest.raises(userfile.UserFileError, match=r"s\.sock: is a socket"):
            userfile.read_bytes(path)


def test_a_file_over_the_cap_is_refused_naming_the_cap_and_how_to_raise_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    f = tmp_path / "big.json"
    f.write_bytes(b"[" + b"0," * 600 + b"0]")
    small = Limits().replace(file_bytes=1000)
    with pytest.raises(userfile.UserFileError) as err:
        userfile.read_bytes(f, limits=small)
    line = str(err.value)
    assert "big.json" in line and "1,000-byte limit on file_bytes" in line
    assert "--raise-limit file_bytes=N" in line and "INFERSIGHT_LIMITS" in line
    # without limits from a command's flags: the environment's, and only it is named
    monkeypatch.setenv("INFERSIGHT_LIMITS", "file_bytes=1000")
    with pytest.raises(userfile.UserFileError, match=r"INFERSIGHT_LIMITS=file_bytes=N$") as err:
        userfile.read_bytes(f)
    assert "--raise-limit" not in str(err.value)
    monkeypatch.setenv("INFERSIGHT_LIMITS", "file_bytes=2000")
    assert len(userfile.read_bytes(f)) == f.stat().st_size
    assert userfile.read_bytes(f, limit="response_bytes", limits=small) == f.read_bytes()


def test_text_that_is_not_utf8_is_one_line(tmp_path: Path) -> None:
    f = tmp_path / "latin.yaml"
    f.write_bytes("title: Règle\n".encode("latin-1"))
    with pytest.raises(userfile.UserFileError, match=r"latin\.yaml: not UTF-8 text \(byte 8\)"):
        userfile.read_text(f)
