"""The library: a folder of Markdown postmortems, the source of truth, friendly to git.

One file per incident, named by its id (`2026-03-14-vector-db-swap.md`); subfolders (a year
each, say) are read too. A file whose front matter is damaged is reported on its own and the
rest are read. New files are written under a fresh name only (a hard link that fails if the
name was taken meanwhile): writers racing for one id each end up with a file of their own.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from infersight import userfile
from infersight.postmortem.config import PostmortemConfig
from infersight.postmortem.frontmatter import FrontMatter, FrontMatterError, dump, parse
from infersight.safe_write import OutputError, check_folder, write_text

#: names in the folder that are not postmortems
SKIPPED = frozenset({"readme.md", "template.md", "index.md"})


class LibraryError(Exception):
    """The library folder cannot be used; `str()` is the one line to print."""


@dataclass(frozen=True)
class Entry:
    path: Path
    front: FrontMatter
    body: str
    sha256: str


@dataclass(frozen=True)
class Problem:
    path: Path
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


@dataclass(frozen=True)
class Scan:
    entries: tuple[Entry, ...]
    problems: tuple[Problem, ...]

    def by_id(self, pid: str) -> Entry | None:
        return next((e for e in self.entries if e.front.id == pid), None)


def _files(folder: Path) -> list[Path]:
    out = []
    for root, dirs, names in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(names):
            if name.endswith(".md") and not name.startswith(".") and name.lower() not in SKIPPED:
                out.append(Path(root) / name)
    return out


def read_entry(path: Path, cfg: PostmortemConfig | None = None) -> Entry:
    """One postmortem; raises FrontMatterError (or OSError) naming what is wrong."""
    cfg = cfg or PostmortemConfig()
    if path.is_symlink() or not path.is_file():
        raise FrontMatterError("not a regular file")
    size = path.stat().st_size
    if size > cfg.max_file_bytes:
        raise FrontMatterError(f"{size} bytes, more than a postmortem's {cfg.max_file_bytes}")
    try:  # a FIFO or device put there after the check above is refused, never waited on
        data = userfile.read_bytes(path)
    except userfile.UserFileError as exc:
        raise FrontMatterError(str(exc).removeprefix(f"{path}: ")) from None
    if len(data) > cfg.max_file_bytes:
        raise FrontMatterError(f"more than a postmortem's {cfg.max_file_bytes} bytes")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise FrontMatterError(f"not UTF-8 text (byte {exc.start})") from None
    front, body = parse(text.replace("\r\n", "\n"))
    return Entry(path, front, body, hashlib.sha256(data).hexdigest())


def scan(folder: str | os.PathLike[str], cfg: PostmortemConfig | None = None) -> Scan:
    """Every postmortem in the folder, and one problem per file that could not be read (a
    damaged front matter, an id another file already has)."""
    root = Path(folder)
    if not root.is_dir():
        raise LibraryError(
            f"{root}: no such library folder; create it with `infersight postmortem new`"
        )
    entries: list[Entry] = []
    problems: list[Problem] = []
    ids: dict[str, Path] = {}
    for path in _files(root):
        try:
            entry = read_entry(path, cfg)
        except FrontMatterError as exc:
            problems.append(Problem(path, str(exc)))
            continue
        except OSError as exc:
            problems.append(Problem(path, f"cannot be read ({exc.strerror or exc})"))
            continue
        first = ids.get(entry.front.id)
        if first is not None:
            problems.append(Problem(path, f"id {entry.front.id} is already used by {first}"))
            continue
        ids[entry.front.id] = path
        entries.append(entry)
    return Scan(tuple(entries), tuple(problems))


GITIGNORE = "# the search index is rebuilt from the postmortems; keep it out of git\n{name}\n"


def _gitignore(root: Path, cfg: PostmortemConfig) -> None:
    target = root / ".gitignore"
    if target.exists() or target.is_symlink():
        return
    # another writer may make it meanwhile: theirs says the same
    with contextlib.suppress(OutputError):
        write_text(target, GITIGNORE.format(name=cfg.index_name), overwrite=False)


def add(
    folder: str | os.PathLike[str],
    front: FrontMatter,
    body: str,
    cfg: PostmortemConfig | None = None,
) -> Entry:
    """Write a new postmortem under its id, or the id with the first free suffix (-2, -3, …)
    when that is taken; never over an existing file. Returns what was written."""
    cfg = cfg or PostmortemConfig()
    try:
        root = check_folder(folder, create=True)
    except OutputError as exc:
        raise LibraryError(str(exc)) from None
    _gitignore(root, cfg)
    taken = {e.front.id for e in scan(root, cfg).entries}
    base = front.id
    for n in range(1, cfg.max_id_attempts + 1):
        pid = base if n == 1 else f"{base}-{n}"
        path = root / f"{pid}.md"
        if pid in taken or path.exists() or path.is_symlink():
            continue
        fm = front.model_copy(update={"id": pid})
        text = dump(fm) + body
        try:
            write_text(path, text, overwrite=False)
        except OutputError:
            if path.exists() or path.is_symlink():
                continue  # another writer took this name between the check and the link
            raise
        data = text.encode("utf-8")
        return Entry(path, fm, body, hashlib.sha256(data).hexdigest())
    raise LibraryError(
        f"{root}: no free id after {cfg.max_id_attempts} tries from {base}; rename some files"
    )
