"""One safe way to write every output: reports, bundles, OpenMetrics text, the demo's folder.

- The target must be absent or a regular file (a directory only where a folder is written);
  it is examined with `lstat`, so a symlink, device, FIFO or socket there is refused, never
  followed or replaced.
- Content goes to a temporary name made with O_EXCL in the target's own folder (unpredictable,
  as `tempfile.mkstemp` makes them), is flushed to disk, then renamed into place: readers see
  the old output or the new one, never half of one.
- Temporary files and folders are registered while they exist; SIGTERM removes them before the
  process dies of the signal (exit status 143), as SIGINT's KeyboardInterrupt already does.
- `check_output` / `check_folder` say what is wrong with an output path before any work runs.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import stat
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from types import FrameType
from typing import IO, Any, Literal

Kind = Literal["file", "dir", "any"]


class OutputError(Exception):
    """An output that cannot or must not be written; `str()` is the one line to print."""


# -- temporaries removed on SIGTERM ---------------------------------------------------------

_temps: set[Path] = set()
_lock = threading.Lock()
_handler_installed = False
_BLOCKED = {signal.SIGTERM, signal.SIGINT}


def _remove(path: Path) -> None:
    try:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)
    except OSError:
        pass


def _on_sigterm(signum: int, _frame: FrameType | None) -> None:
    for path in list(_temps):
        _remove(path)
    _temps.clear()
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)  # die of the signal, as without the handler (exit 143)


def _install_handler() -> None:
    """Take SIGTERM where nobody else has (default disposition, main thread)."""
    global _handler_installed
    if _handler_installed or threading.current_thread() is not threading.main_thread():
        return
    if signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:
        signal.signal(signal.SIGTERM, _on_sigterm)
    _handler_installed = True


@contextlib.contextmanager
def _signals_held() -> Iterator[None]:
    """No SIGTERM/SIGINT between making a temporary and registering it (nor while renaming)."""
    held = threading.current_thread() is threading.main_thread()
    old = signal.pthread_sigmask(signal.SIG_BLOCK, _BLOCKED) if held else None
    try:
        yield
    finally:
        if old is not None:
            signal.pthread_sigmask(signal.SIG_SETMASK, old)


def registered_temps() -> frozenset[Path]:
    """The temporaries alive now (for tests)."""
    return frozenset(_temps)


# -- checks -----------------------------------------------------------------------------------


def _kind_of(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISREG(mode):
        return "a file"
    return "of an unknown kind"


def existing(path: Path) -> os.stat_result | None:
    """`lstat` of path, None when nothing is there (a dangling symlink is something)."""
    try:
        return os.lstat(path)
    except FileNotFoundError:
        return None
    except NotADirectoryError:
        raise OutputError(f"{path}: a part of the path is a file, not a folder") from None
    except OSError as e:
        raise OutputError(f"{path}: cannot be examined ({e.strerror or e})") from None


def check_target(path: str | os.PathLike[str], kind: Kind = "file", overwrite: bool = True) -> Path:
    """The target if an output of `kind` may be put there: absent, or (with overwrite) a regular
    file (`file`), a real directory (`dir`) or either (`any`). Anything else: OutputError."""
    target = Path(path)
    st = existing(target)
    if st is None:
        return target
    allowed = {
        "file": stat.S_ISREG(st.st_mode),
        "dir": stat.S_ISDIR(st.st_mode),
        "any": stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode),
    }[kind]
    if not allowed:
        what = "a folder" if kind == "dir" else "a regular file"
        raise OutputError(
            f"{target}: is {_kind_of(st.st_mode)}; an output is only written where nothing is, "
            f"or over {what}: choose another path"
        )
    if not overwrite:
        raise OutputError(f"{target}: already exists; choose another name or overwrite it")
    return target


def check_folder(path: str | os.PathLike[str], create: bool = False) -> Path:
    """The folder if files can be created in it, else OutputError saying why.

    With `create`, a missing folder is made (with its parents). Writability is tried for real
    (a temporary file made and removed), so it holds for root and read-only mounts alike.
    """
    folder = Path(path) if str(path) else Path(".")
    st = existing(folder)
    if st is not None and stat.S_ISLNK(st.st_mode) and folder.is_dir():
        st = os.stat(folder)  # a symlink to a folder is a folder to write into, not a target
    if st is None:
        if not create:
            raise OutputError(f"{folder}: no such folder; create it first or choose another")
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise OutputError(f"{folder}: cannot create the folder ({e.strerror or e})") from None
    elif not stat.S_ISDIR(st.st_mode):
        raise OutputError(f"{folder}: is {_kind_of(st.st_mode)}, not a folder; choose a folder")
    try:
        fd, probe = tempfile.mkstemp(dir=folder, prefix=".infersight-probe.", suffix=".tmp")
    except OSError as e:
        raise OutputError(
            f"{folder}: cannot write in this folder ({e.strerror or e}); choose another"
        ) from None
    os.close(fd)
    os.unlink(probe)
    return folder


def check_output(path: str | os.PathLike[str], kind: Kind = "file", overwrite: bool = True) -> Path:
    """Both checks, for commands to call before the analysis: the folder exists and takes new
    files, and the target is absent or of `kind`."""
    target = Path(path)
    if not target.name or target.name in (".", ".."):
        raise OutputError(f"{path}: names a folder; give a file name")
    check_folder(target.parent)
    return check_target(target, kind, overwrite)


# -- writing ----------------------------------------------------------------------------------


def _fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _new_temp(target: Path, folder: bool) -> tuple[Path, int | None]:
    """A registered temporary next to target: (path, open fd for a file, None for a folder)."""
    _install_handler()
    prefix, suffix = f".{target.name}.", ".tmp"
    fd: int | None = None
    with _signals_held():
        if folder:
            tmp = Path(tempfile.mkdtemp(dir=target.parent, prefix=prefix, suffix=suffix))
        else:
            fd, name = tempfile.mkstemp(dir=target.parent, prefix=prefix, suffix=suffix)
            tmp = Path(name)
        with _lock:
            _temps.add(tmp)
    return tmp, fd


def discard(tmp: Path) -> None:
    """Remove a temporary and forget it."""
    with _signals_held():
        _remove(tmp)
        with _lock:
            _temps.discard(tmp)


def install(tmp: Path, target: Path, overwrite: bool = True) -> Path:
    """Rename a finished temporary to `target`, re-checking the target just before.

    A new target is linked into place, so one that appeared meanwhile is not clobbered; an old
    folder survives until the new one is in. The temporary is removed on any failure.
    """
    kind: Kind = "dir" if tmp.is_dir() else "file"
    try:
        with _signals_held():
            st = existing(target)
            if st is not None:
                check_target(target, "any", overwrite)
            if st is None and kind == "dir":
                os.rename(tmp, target)
            elif st is None:
                try:
                    os.link(tmp, target)  # fails, rather than clobbers, if the target appeared
                except FileExistsError:
                    raise OutputError(f"{target}: appeared meanwhile; nothing replaced") from None
                except OSError:  # a filesystem without hard links
                    os.rename(tmp, target)
                else:
                    os.unlink(tmp)
            elif kind == "file" and stat.S_ISREG(st.st_mode):
                os.replace(tmp, target)
            else:
                _swap(tmp, target)
            with _lock:
                _temps.discard(tmp)
        _fsync_dir(target.parent)
    except BaseException:
        discard(tmp)
        raise
    return target


def _swap(tmp: Path, target: Path) -> None:
    """Put tmp where target is when one of them is a folder: the old one moves aside first."""
    aside = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}.", suffix=".old"))
    with _lock:
        _temps.add(aside)
    try:
        os.rename(target, aside / "old")
        try:
            os.rename(tmp, target)
        except BaseException:
            os.rename(aside / "old", target)
            raise
    finally:
        _remove(aside)
        with _lock:
            _temps.discard(aside)


@contextlib.contextmanager
def temp_folder(target: str | os.PathLike[str]) -> Iterator[Path]:
    """A registered temporary folder next to target; removed unless installed meanwhile."""
    tmp, _ = _new_temp(Path(target), folder=True)
    try:
        yield tmp
    except BaseException:
        discard(tmp)
        raise


@contextlib.contextmanager
def open_atomic(
    target: str | os.PathLike[str],
    binary: bool = False,
    overwrite: bool = True,
    kind: Kind = "file",
) -> Iterator[IO[Any]]:
    """`with open_atomic(path) as f:` write to f (text, UTF-8, or bytes); on a clean exit the
    file is flushed, made readable (0644) and renamed to `path`; on any error nothing changes
    at `path` and no temporary stays behind. `kind="any"` lets the file replace a folder
    (a bundle rewritten as a tarball)."""
    path = check_target(target, kind, overwrite)
    tmp, fd = _new_temp(path, folder=False)
    assert fd is not None
    try:
        f: IO[Any] = (
            os.fdopen(fd, "wb") if binary else os.fdopen(fd, "w", encoding="utf-8", newline="\n")
        )
        with f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)
    except BaseException:
        discard(tmp)
        raise
    install(tmp, path, overwrite)


def write_text(target: str | os.PathLike[str], text: str, overwrite: bool = True) -> Path:
    with open_atomic(target, overwrite=overwrite) as f:
        f.write(text)
    return Path(target)


def write_bytes(target: str | os.PathLike[str], data: bytes, overwrite: bool = True) -> Path:
    with open_atomic(target, binary=True, overwrite=overwrite) as f:
        f.write(data)
    return Path(target)


def describe(exc: OSError) -> str:
    """An OSError as the short phrase to print ("No space left on device")."""
    return exc.strerror or str(exc)
