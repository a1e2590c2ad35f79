"""Read the members of a bundle into memory, from a .tar.gz or a directory, refusing hostile input.

Nothing is ever extracted to the filesystem. A tarball is read as a stream through a counter of
the bytes actually decompressed, so neither a lying header nor a decompression bomb can exhaust
memory; only regular files (and directory entries, which are ignored) with safe relative names
are accepted. A directory bundle may hold no symlinks at all. The caps (`infersight.limits.Limits`)
are checked against sizes declared in headers or by stat before a byte is read; a directory's
manifest.json is read first, so a folder that is no bundle is refused without reading it, and a
member the manifest does not list is refused before its data is read. A bundle path that is not
a regular file or a directory (a FIFO, a device) is refused without blocking on it.
"""

from __future__ import annotations

import gzip
import os
import stat
import tarfile
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from infersight.bundle.errors import fail
from infersight.bundle.manifest import MANIFEST, check_member_name
from infersight.limits import Limits
from infersight.sources.jsonload import loads

#: is this member name one the manifest lists? (None: no manifest read yet)
Listed = Callable[[str], bool] | None


_STREAM_CHUNK = 1 << 20


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


def _listing(manifest: bytes, limits: Limits) -> Listed:
    """The member names a manifest lists (best effort: a broken manifest is judged later)."""
    try:
        doc = loads(manifest, limits.json_depth)
    except ValueError:  # not JSON, too deep: parse_manifest says so
        return None
    listed = doc.get("members") if isinstance(doc, dict) else None
    if not isinstance(listed, dict):
        return None
    names = set(listed)
    return lambda name: name in names or name == MANIFEST


def _refuse_unlisted(where: str, name: str, listed: Listed) -> None:
    if listed is not None and not listed(name):
        raise fail(where, "not listed in manifest.json (added after writing?)", name)


def _read_tar(path: Path, limits: Limits, fd: int) -> dict[str, bytes]:
    where = path.name
    members: dict[str, bytes] = {}
    total = 0
    listed: Listed = None
    # headers and padding cost at most 1 KiB per member beyond its data
    cap = limits.total_bytes + 1024 * (limits.members + 2)
    with os.fdopen(fd, "rb") as raw, gzip.GzipFile(fileobj=raw, mode="rb") as gz:
        stream = _CountingReader(gz, cap, where)
        # a stream read in 1 MiB pieces, not tarfile's 10 KiB records: a 15 MB member read
        # record by record costs a third of a second of copying before any parsing
        with tarfile.open(fileobj=stream, mode="r|", bufsize=_STREAM_CHUNK) as tar:  # type: ignore[call-overload]
            for entries, info in enumerate(tar, start=1):
                if entries > limits.members:
                    raise fail(
                        where,
                        f"more than {limits.members} members; refused; {limits.hint('members')}",
                    )
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
                _refuse_unlisted(where, name, listed)
                _check_size(where, name, info.size, total, limits)
                total += info.size
                f = tar.extractfile(info)
                data = f.read(info.size) if f is not None else b""
                if len(data) != info.size:
                    raise fail(where, "truncated (member shorter than its header says)", name)
                members[name] = data
                if name == MANIFEST:
                    listed = _listing(data, limits)
        while stream.read(1 << 16):  # the rest, so gzip checks its CRC and length trailer
            pass
    return members


def _check_size(where: str, name: str, size: int, total: int, limits: Limits) -> None:
    """Refuse a member by its declared size, before reading it."""
    if size > limits.member_bytes:
        raise fail(
            where,
            f"{size} bytes, over the {limits.member_bytes}-byte cap; {limits.hint('member_bytes')}",
            name,
        )
    if total + size > limits.total_bytes:
        raise fail(
            where,
            f"members exceed the {limits.total_bytes}-byte cap in total; "
            f"{limits.hint('total_bytes')}",
        )


def _read_file(where: str, rel: str, path: str, size: int) -> bytes:
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            raise fail(where, "not a regular file; refused", rel)
        data = f.read(size + 1)
    if len(data) != size:
        raise fail(where, "changed while being read", rel)
    return data


def _read_dir(path: Path, limits: Limits) -> dict[str, bytes]:
    where = path.name
    members: dict[str, bytes] = {}
    total = 0
    listed: Listed = None
    # manifest.json first: a folder that is no bundle is refused before anything else is read,
    # and members it does not list are refused unread
    head = path / MANIFEST
    st = head.lstat() if os.path.lexists(head) else None
    if st is None:
        raise fail(where, "no manifest.json; not an infersight bundle")
    if not stat.S_ISREG(st.st_mode):
        raise fail(where, "not a regular file; refused", MANIFEST)
    _check_size(where, MANIFEST, st.st_size, 0, limits)
    members[MANIFEST] = _read_file(where, MANIFEST, str(head), st.st_size)
    total = st.st_size
    listed = _listing(members[MANIFEST], limits)
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
                if rel == MANIFEST:
                    continue  # read first
                if len(members) >= limits.members:
                    raise fail(
                        where,
                        f"more than {limits.members} members; refused; {limits.hint('members')}",
                    )
                _refuse_unlisted(where, rel, listed)
                _check_size(where, rel, st.st_size, total, limits)
                total += st.st_size
                members[rel] = _read_file(where, rel, entry.path, st.st_size)
    return members


def _open_regular(path: Path) -> int:
    """A descriptor on the file at `path`, refusing a FIFO or device without blocking on it."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise fail(path.name, "is not a regular file or a directory (a FIFO, a device?); refused")
    os.set_blocking(fd, True)
    return fd


def read_members(path: Path, limits: Limits | None = None) -> dict[str, bytes]:
    """Every member of the bundle at `path` by relative name; BundleError when refused."""
    limits = limits or Limits()
    try:
        if path.is_symlink() and path.is_dir():
            raise fail(path.name, "is a symlink to a directory; pass the directory itself")
        if path.is_dir():
            return _read_dir(path, limits)
        if not path.exists():
            raise fail(str(path), "does not exist")
        return _read_tar(path, limits, _open_regular(path))
    except (tarfile.TarError, EOFError, zlib.error, gzip.BadGzipFile) as e:
        raise fail(path.name, f"not a readable .tar.gz, damaged or truncated ({e})") from None
    except OSError as e:
        raise fail(path.name, f"cannot be read ({e.strerror or e})") from None
