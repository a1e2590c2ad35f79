"""Read the members of a bundle into memory, from a .tar.gz or a directory, refusing hostile input.

Nothing is ever extracted to the filesystem. A tarball is read as a stream through a counter of
the bytes actually decompressed, so neither a lying header nor a decompression bomb can exhaust
memory; only regular files (and directory entries, which are ignored) with safe relative names
are accepted. A directory bundle may hold no symlinks at all.
"""

from __future__ import annotations

import gzip
import os
import stat
import tarfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from infersight.bundle.errors import fail
from infersight.bundle.manifest import check_member_name

GiB = 1 << 30


@dataclass(frozen=True)
class Limits:
    """Caps on what reading a bundle may hold in memory."""

    total_bytes: int = 2 * GiB
    member_bytes: int = 1 * GiB
    members: int = 100_000


def is_tarball(path: str | os.PathLike[str]) -> bool:
    return str(path).endswith((".tar.gz", ".tgz"))


class _Readable(Protocol):
    def read(self, size: int = -1, /) -> bytes: ...


class _CountingReader:
    """File-like over a decompressing stream that refuses to yield more than `cap` bytes."""

    def __init__(self, inner: _Readable, cap: int, where: str) -> None:
        self._inner, self._cap, self._where, self.count = inner, cap, where, 0

    def read(self, size: int = -1) -> bytes:
        want = self._cap - self.count + 1 if size < 0 else min(size, self._cap - self.count + 1)
        data = self._inner.read(want)
        self.count += len(data)
        if self.count > self._cap:
            raise fail(self._where, f"decompresses to more than {self._cap} bytes; refused")
        return data


def _member_name(raw: str, where: str) -> str:
    name = raw[2:] if raw.startswith("./") else raw
    try:
        return check_member_name(name.rstrip("/") if name.endswith("/") else name)
    except ValueError as e:
        raise fail(where, f"unsafe member name: {e}", raw) from None


def _read_tar(path: Path, limits: Limits) -> dict[str, bytes]:
    where = path.name
    members: dict[str, bytes] = {}
    total = 0
    # headers and padding cost at most 1 KiB per member beyond its data
    cap = limits.total_bytes + 1024 * (limits.members + 2)
    with open(path, "rb") as raw, gzip.GzipFile(fileobj=raw, mode="rb") as gz:
        stream = _CountingReader(gz, cap, where)
        with tarfile.open(fileobj=stream, mode="r|") as tar:  # type: ignore[call-overload]
            for entries, info in enumerate(tar, start=1):
                if entries > limits.members:
                    raise fail(where, f"more than {limits.members} members; refused")
                if info.name in ("./", ".") and info.isdir():
                    continue
                name = _member_name(info.name, where)
                if info.isdir():
                    continue
                if not info.isreg() or info.issparse():
                    kind = "a link" if info.issym() or info.islnk() else "not a regular file"
                    raise fail(where, f"{kind}; refused", info.name)
                if name in members:
                    raise fail(where, "appears twice in the archive", name)
                if info.size > limits.member_bytes:
                    raise fail(
                        where, f"{info.size} bytes, over the {limits.member_bytes}-byte cap", name
                    )
                total += info.size
                if total > limits.total_bytes:
                    raise fail(where, f"members exceed the {limits.total_bytes}-byte cap in total")
                f = tar.extractfile(info)
                data = f.read(info.size) if f is not None else b""
                if len(data) != info.size:
                    raise fail(where, "truncated (member shorter than its header says)", name)
                members[name] = data
        while stream.read(1 << 16):  # the rest, so gzip checks its CRC and length trailer
            pass
    return members


def _read_dir(path: Path, limits: Limits) -> dict[str, bytes]:
    where = path.name
    members: dict[str, bytes] = {}
    total = 0
    pending = [(path, "")]
    while pending:
        folder, prefix = pending.pop()
        with os.scandir(folder) as it:
            for entry in it:
                rel = _member_name(prefix + entry.name, where)
                st = entry.stat(follow_symlinks=False)
                if stat.S_ISLNK(st.st_mode):
                    raise fail(where, "is a symlink; refused", rel)
                if stat.S_ISDIR(st.st_mode):
                    pending.append((Path(entry.path), rel + "/"))
                    continue
                if not stat.S_ISREG(st.st_mode):
                    raise fail(where, "not a regular file; refused", rel)
                if len(members) >= limits.members:
                    raise fail(where, f"more than {limits.members} members; refused")
                if st.st_size > limits.member_bytes:
                    raise fail(
                        where, f"{st.st_size} bytes, over the {limits.member_bytes}-byte cap", rel
                    )
                total += st.st_size
                if total > limits.total_bytes:
                    raise fail(where, f"members exceed the {limits.total_bytes}-byte cap in total")
                fd = os.open(entry.path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
                with os.fdopen(fd, "rb") as f:
                    data = f.read(st.st_size + 1)
                if len(data) != st.st_size:
                    raise fail(where, "changed while being read", rel)
                members[rel] = data
    return members


def read_members(path: Path, limits: Limits = Limits()) -> dict[str, bytes]:
    """Every member of the bundle at `path` by relative name; BundleError when refused."""
    try:
        if path.is_symlink() and path.is_dir():
            raise fail(path.name, "is a symlink to a directory; pass the directory itself")
        if path.is_dir():
            return _read_dir(path, limits)
        if not path.exists():
            raise fail(str(path), "does not exist")
        return _read_tar(path, limits)
    except (tarfile.TarError, EOFError, zlib.error, gzip.BadGzipFile) as e:
        raise fail(path.name, f"not a readable .tar.gz, damaged or truncated ({e})") from None
    except OSError as e:
        raise fail(path.name, f"cannot be read ({e.strerror or e})") from None
