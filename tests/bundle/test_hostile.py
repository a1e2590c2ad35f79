"""Hostile tarballs and directories: refused with BundleError, nothing written anywhere."""

from __future__ import annotations

import gzip
import io
import os
import tarfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from bundle_helpers import make_frame

from infersight.bundle import BundleError, Limits, read_bundle, write_bundle

SMALL = Limits(total_bytes=1 << 20, member_bytes=1 << 19, members=50)


def snapshot(root: Path) -> list[tuple[str, int]]:
    return sorted((str(p.relative_to(root)), p.lstat().st_size) for p in root.rglob("*"))


@pytest.fixture
def sandbox(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A work dir (also the cwd) whose listing, and its parent's, must not change."""
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    yield work


def build(path: Path, members: list[tuple[tarfile.TarInfo, bytes | None]]) -> Path:
    with tarfile.open(path, "w:gz", format=tarfile.PAX_FORMAT) as tar:
        for info, data in members:
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    return path


def regular(name: str, data: bytes = b"x") -> tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    return info, data


def special(name: str, kind: bytes, link: str = "") -> tuple[tarfile.TarInfo, None]:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, link
    return info, None


def assert_refused(path: Path, sandbox: Path, match: str, limits: Limits | None = None) -> None:
    parent = sandbox.parent
    before, before_parent = snapshot(sandbox), snapshot(parent)
    with pytest.raises(BundleError, match=match):
        read_bundle(path, limits)
    assert snapshot(sandbox) == before
    assert snapshot(parent) == before_parent
    assert not (parent.parent / "evil").exists()


HOSTILE = {
    "dotdot": ([regular("../evil")], "unsafe member name.*'\\.\\.'"),
    "nested dotdot": ([regular("artifacts/../../evil")], "unsafe member name"),
    "absolute": ([regular("/tmp/abs/evil")], "absolute path"),
    "backslash": ([regular("artifacts\\..\\evil")], "backslash"),
    "symlink": ([special("artifacts/passwd", tarfile.SYMTYPE, "/etc/passwd")], "a link"),
    "hardlink": (
        [regular("manifest.json", b"{}"), special("evil", tarfile.LNKTYPE, "manifest.json")],
        "a link",
    ),
    "fifo": ([special("artifacts/pipe", tarfile.FIFOTYPE)], "not a regular file"),
    "char device": ([special("artifacts/null", tarfile.CHRTYPE)], "not a regular file"),
    "block device": ([special("artifacts/sda", tarfile.BLKTYPE)], "not a regular file"),
    "duplicate": (
        [regular("manifest.json", b"{}"), regular("manifest.json", b"{}")],
        "member manifest.json: appears twice",
    ),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_member(sandbox: Path, case: str) -> None:
    members, match = HOSTILE[case]
    path = build(sandbox / "hostile.tar.gz", list(members))
    assert_refused(path, sandbox, match)


def test_header_claiming_huge_size(sandbox: Path) -> None:
    info = tarfile.TarInfo("metrics/incident.parquet")
    info.size = 1 << 40  # a terabyte, with no data behind it
    path = sandbox / "liar.tar.gz"
    path.write_bytes(gzip.compress(info.tobuf(format=tarfile.GNU_FORMAT)))
    assert_refused(path, sandbox, "over the .*-byte cap")


def test_gzip_bomb_member(sandbox: Path) -> None:
    bomb = regular("artifacts/zeros", bytes(8 << 20))  # 8 MiB of zeros, ~8 KiB compressed
    path = build(sandbox / "bomb.tar.gz", [bomb])
    assert path.stat().st_size < 64 << 10
    assert_refused(path, sandbox, "over the .*-byte cap", SMALL)


def test_members_over_total_cap(sandbox: Path) -> None:
    chunk = bytes(400 << 10)
    path = build(sandbox / "many.tar.gz", [regular(f"artifacts/{i}", chunk) for i in range(4)])
    assert_refused(path, sandbox, "in total", SMALL)


def test_bomb_hidden_in_pax_header(sandbox: Path) -> None:
    """Header data is not a member: only the count of decompressed bytes can stop it."""
    info, data = regular("manifest.json", b"{}")
    info.pax_headers = {"comment": "A" * (4 << 20)}
    path = build(sandbox / "pax.tar.gz", [(info, data)])
    assert_refused(path, sandbox, "decompresses to more than", SMALL)


def test_too_many_members(sandbox: Path) -> None:
    path = build(sandbox / "n.tar.gz", [regular(f"artifacts/{i}") for i in range(60)])
    assert_refused(path, sandbox, "more than 50 members", SMALL)


@pytest.fixture
def folder(sandbox: Path) -> Path:
    return write_bundle(sandbox / "b", {"incident": make_frame()}, {"kind": "test"})


@pytest.mark.parametrize("target", ["/etc/passwd", "metrics/incident.parquet", "missing"])
def test_directory_with_symlink(sandbox: Path, folder: Path, target: str) -> None:
    os.symlink(target, folder / "artifacts.txt")
    assert_refused(folder, sandbox, "member artifacts.txt: is a symlink")


def test_directory_with_symlinked_folder(sandbox: Path, folder: Path) -> None:
    os.symlink("/etc", folder / "artifacts")
    assert_refused(folder, sandbox, "member artifacts: is a symlink")


def test_directory_with_fifo(sandbox: Path, folder: Path) -> None:
    os.mkfifo(folder / "artifacts.pipe")
    assert_refused(folder, sandbox, "not a regular file")


def test_directory_member_over_cap(sandbox: Path, folder: Path) -> None:
    (folder / "metrics" / "incident.parquet").write_bytes(bytes(600 << 10))  # a listed member
    assert_refused(folder, sandbox, "member metrics/incident.parquet: .* over the", SMALL)


def test_directory_member_not_listed_is_refused_unread(sandbox: Path, folder: Path) -> None:
    (folder / "big").write_bytes(bytes(600 << 10))
    assert_refused(folder, sandbox, "member big: not listed in manifest.json", SMALL)
