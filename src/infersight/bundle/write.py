"""Write an evidence bundle atomically, as a .tar.gz or as a directory of the same layout.

Everything is built under a temporary name in the target's own directory, flushed to disk, and
only then renamed into place (`safe_write`), so a crash, an error or SIGTERM leaves either the
old target or nothing.
"""

from __future__ import annotations

import hashlib
import os
import tarfile
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
from pydantic import ValidationError

from infersight.bundle.container import is_tarball
from infersight.bundle.errors import fail
from infersight.bundle.manifest import (
    ARTIFACTS_DIR,
    INCIDENT,
    MANIFEST,
    SCHEMA_VERSION,
    Manifest,
    check_member_name,
    window_file,
    window_queries,
)
from infersight.bundle.table import frame_to_parquet
from infersight.frame import MetricFrame
from infersight.provenance import QueryRun
from infersight.safe_write import (
    OutputError,
    check_folder,
    existing,
    install,
    open_atomic,
    temp_folder,
)
from infersight.safe_write import check_target as safe_check_target

#: Reason recorded in `missing` for a signal whose series hold no value in any window.
NO_SAMPLES = "no samples in any window"


def _members(
    where: str, windows: Mapping[str, MetricFrame], artifacts: Mapping[str, bytes]
) -> dict[str, bytes]:
    members: dict[str, bytes] = {}
    for name, frame in windows.items():
        if frame.n == 0:
            raise fail(where, f"window {name!r} has no grid points")
        members[window_file(name)] = frame_to_parquet(frame)
    for name, data in artifacts.items():
        try:
            check_member_name(name)
        except ValueError as e:
            raise fail(where, f"bad artifact name: {e}") from None
        members[ARTIFACTS_DIR + name] = bytes(data)
    return members


def _manifest(
    where: str,
    windows: Mapping[str, MetricFrame],
    source: Mapping[str, str],
    members: Mapping[str, bytes],
    missing: Mapping[str, str],
    notes: str | None,
    queries: Mapping[str, Sequence[QueryRun]],
) -> Manifest:
    signals: set[str] = set()
    empty: set[str] = set()
    instances: set[str] = set()
    for frame in windows.values():
        for name, s in frame.series.items():
            has = [bool(np.any(~np.isnan(row))) for row in s.values]
            (signals if any(has) else empty).add(name)
            instances.update(i for i, ok in zip(s.instances, has, strict=True) if ok)
    all_missing = dict(missing)
    all_missing.update(dict.fromkeys(sorted(empty - signals - set(missing)), NO_SAMPLES))
    raw = {
        "schema_version": SCHEMA_VERSION,
        "created_at": datetime.now(UTC),
        "source": dict(source),
        "windows": {
            name: {"start": f.start, "end": f.end, "step": f.step, "file": window_file(name)}
            for name, f in windows.items()
        },
        "signals": sorted(signals),
        "instances": sorted(instances),
        "missing": all_missing,
        "members": {n: hashlib.sha256(d).hexdigest() for n, d in members.items()},
        "notes": notes,
        "queries": {
            name: q
            for name, runs in queries.items()
            if name in windows and (q := window_queries(runs)) is not None
        },
    }
    try:
        return Manifest.model_validate(raw)
    except ValidationError as e:
        first = e.errors()[0]
        loc = ".".join(str(p) for p in first["loc"])
        raise fail(where, f"cannot be written: {loc}: {first['msg']}") from None


def _write_tar(target: Path, files: Mapping[str, bytes], mtime: float, overwrite: bool) -> None:
    with (
        open_atomic(target, binary=True, overwrite=overwrite, kind="any") as f,
        tarfile.open(fileobj=f, mode="w:gz", compresslevel=6) as tar,
    ):
        for member, data in files.items():
            info = tarfile.TarInfo(member)
            info.size, info.mtime, info.mode = len(data), int(mtime), 0o644
            tar.addfile(info, _Reader(data))


class _Reader:
    """Minimal file-like over bytes for tarfile.addfile (no copy, unlike BytesIO(bytes))."""

    def __init__(self, data: bytes) -> None:
        self._view, self._pos = memoryview(data), 0

    def read(self, size: int = -1) -> bytes:
        end = len(self._view) if size < 0 else self._pos + size
        chunk = self._view[self._pos : end].tobytes()
        self._pos += len(chunk)
        return chunk


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_dir(target: Path, files: Mapping[str, bytes], overwrite: bool) -> None:
    with temp_folder(target) as tmp:
        folders = {tmp}
        for member, data in files.items():
            path = tmp / member
            path.parent.mkdir(parents=True, exist_ok=True)
            folders.add(path.parent)
            with open(path, "xb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
        for folder in sorted(folders, key=lambda p: len(p.parts), reverse=True):
            folder.chmod(0o755)
            _fsync_dir(folder)
    install(tmp, target, overwrite)


def _foreign_dir(path: Path) -> bool:
    """A real, non-empty directory without manifest.json: someone's files, not a bundle."""
    if path.is_symlink() or not path.is_dir():
        return False
    try:
        return not (path / MANIFEST).is_file() and any(path.iterdir())
    except OSError:
        return True


def check_target(path: str | os.PathLike[str], overwrite: bool = False) -> Path:
    """The bundle path if a bundle may be written there, else BundleError saying why.

    Commands call it before long work (a pull), so a bad `-o` fails at once. Only nothing, a
    regular file or a bundle folder is ever replaced; a symlink, device or FIFO never is.
    """
    target = Path(path)
    where = target.name
    if existing(target) is not None and not overwrite:
        raise fail(where, "already exists; choose another name or overwrite it explicitly")
    if overwrite and _foreign_dir(target):
        raise fail(
            where,
            "is a directory that is not an infersight bundle; overwriting would delete its "
            "contents, so choose another name (e.g. a new .tar.gz)",
        )
    if not target.parent.is_dir():
        raise fail(where, f"directory {target.parent} does not exist")
    try:
        check_folder(target.parent)
        safe_check_target(target, "any", overwrite)
    except OutputError as e:
        raise fail(where, str(e)) from None
    return target


def write_bundle(
    path: str | os.PathLike[str],
    windows: Mapping[str, MetricFrame],
    source: Mapping[str, str],
    missing: Mapping[str, str] | None = None,
    artifacts: Mapping[str, bytes] | None = None,
    notes: str | None = None,
    *,
    overwrite: bool = False,
    queries: Mapping[str, Sequence[QueryRun]] | None = None,
) -> Path:
    """Write a bundle to `path` (a .tar.gz/.tgz file, else a directory) and return the path.

    `windows` maps window names to frames and must hold "incident"; `source` needs a `kind`;
    `missing` maps canonical signals asked for but unavailable to the reason; `artifacts` maps
    relative names to contents (stored under artifacts/); `queries` maps window names to the
    queries their series came from (`PullResult.runs`), recorded in the manifest. Signals whose
    series hold no value in any window are added to `missing`. Raises BundleError for anything
    unusable, including an existing target unless `overwrite` is set; even then a non-empty
    directory that is not a bundle (no manifest.json) is never replaced.
    """
    target = check_target(path, overwrite)
    where = target.name
    if INCIDENT not in windows:
        raise fail(where, f"needs a window named {INCIDENT!r}; got {sorted(windows)}")
    members = _members(where, windows, artifacts or {})
    manifest = _manifest(where, windows, source, members, missing or {}, notes, queries or {})
    files = {MANIFEST: manifest.to_json(), **members}
    try:
        if is_tarball(target):
            _write_tar(target, files, manifest.created_at.timestamp(), overwrite)
        else:
            _write_dir(target, files, overwrite)
    except OutputError as e:
        raise fail(where, str(e)) from None
    except FileExistsError:
        raise fail(
            where, "already exists; choose another name or overwrite it explicitly"
        ) from None
    except OSError as e:
        raise fail(where, f"cannot be written ({e.strerror or e})") from None
    return target
