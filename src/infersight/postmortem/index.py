"""The full-text index: SQLite FTS5 over the library's files, which stay the source of truth.

The index is a cache in the library folder. Whenever the files differ from what it was built
from (a file added, edited or removed: compared by path and sha256), it is rebuilt from all of
them in memory and written in one piece through `safe_write` (readers see the old index or
the new one). A damaged index, or a folder that takes no file, only means building in memory.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from infersight import userfile
from infersight.postmortem.config import PostmortemConfig
from infersight.postmortem.library import Entry, Scan
from infersight.safe_write import OutputError, check_target, write_bytes

#: porter: "swapped" finds "swap"; unicode61 splits `vector_db_swap` into its words
_SCHEMA = """
CREATE TABLE files (path TEXT PRIMARY KEY, sha256 TEXT NOT NULL);
CREATE VIRTUAL TABLE docs USING fts5(
    id UNINDEXED, path UNINDEXED, title, root_causes, signals, layers, services, body,
    tokenize = 'porter unicode61'
);
"""
#: column weights for bm25 (id and path are not indexed): a word in the title or the root
#: causes says more about the incident than one in the body
_BM25 = "bm25(docs, 0, 0, 8.0, 6.0, 3.0, 2.0, 2.0, 1.0)"


@dataclass(frozen=True)
class Hit:
    id: str
    path: str
    title: str
    score: float  # bm25, lower is better
    snippet: str

    def to_dict(self) -> dict[str, object]:
        return {
            "id": self.id,
            "path": self.path,
            "title": self.title,
            "score": self.score,
            "snippet": self.snippet,
        }


@dataclass(frozen=True)
class Sync:
    """What opening the index did: whether it was rebuilt, and whether it could be saved."""

    rebuilt: bool
    saved: bool
    note: str = ""


def _state(entries: Sequence[Entry], root: Path) -> dict[str, str]:
    return {str(e.path.relative_to(root)): e.sha256 for e in entries}


def _build(entries: Sequence[Entry], root: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:")
    conn.executescript(_SCHEMA)
    for e in entries:
        rel = str(e.path.relative_to(root))
        f = e.front
        conn.execute("INSERT INTO files VALUES (?, ?)", (rel, e.sha256))
        conn.execute(
            "INSERT INTO docs VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                f.id,
                rel,
                f.title,
                " ".join(f.root_causes),
                " ".join(f.signals),
                " ".join(f.layers),
                " ".join(f.services),
                e.body,
            ),
        )
    conn.commit()
    return conn


def _load(path: Path) -> sqlite3.Connection | None:
    """The saved index, or None when there is none or it cannot be used."""
    try:
        check_target(path, "file")
        if not path.exists():
            return None
        conn = sqlite3.connect(":memory:")
        conn.deserialize(userfile.read_bytes(path))
        conn.execute("SELECT count(*) FROM docs").fetchone()
        return conn
    except (OSError, OutputError, sqlite3.Error, userfile.UserFileError):
        return None


def _saved_state(conn: sqlite3.Connection) -> dict[str, str] | None:
    try:
        return {p: s for p, s in conn.execute("SELECT path, sha256 FROM files")}
    except sqlite3.Error:
        return None


class Index:
    """An open index over one scan of the library."""

    def __init__(self, conn: sqlite3.Connection, sync: Sync) -> None:
        self._conn = conn
        self.sync = sync

    @classmethod
    def open(cls, root: Path, scan: Scan, cfg: PostmortemConfig | None = None) -> Index:
        cfg = cfg or PostmortemConfig()
        path = root / cfg.index_name
        want = _state(scan.entries, root)
        conn = _load(path)
        if conn is not None and _saved_state(conn) == want:
            return cls(conn, Sync(rebuilt=False, saved=True))
        if conn is not None:
            conn.close()
        conn = _build(scan.entries, root)
        try:
            write_bytes(path, conn.serialize())
        except (OutputError, OSError) as exc:
            return cls(conn, Sync(True, False, f"index kept in memory only: {exc}"))
        return cls(conn, Sync(rebuilt=True, saved=True))

    def close(self) -> None:
        self._conn.close()

    def search(self, text: str, limit: int = 10) -> list[Hit]:
        """Postmortems holding every word of `text` (stemmed; any case), best first."""
        query = match_query(text)
        if not query:
            return []
        rows = self._conn.execute(
            f"SELECT id, path, title, {_BM25} AS score, "
            "snippet(docs, 7, '[', ']', ' … ', 12) FROM docs WHERE docs MATCH ? "
            "ORDER BY score LIMIT ?",
            (query, limit),
        ).fetchall()
        return [Hit(r[0], r[1], r[2], float(r[3]), _plain(r[4])) for r in rows]


def _plain(snippet: object) -> str:
    """A snippet on one line, without the Markdown escapes the drafts put before `_` and `*`."""
    return re.sub(r"\\([\\`*_{}<>|#])", r"\1", " ".join(str(snippet).split()))


def match_query(text: str) -> str:
    """User words as an FTS5 query that cannot be a syntax error: each word a quoted string
    (quotes are dropped), all of them required. `vector_db_swap` stays one phrase."""
    words = re.findall(r"[^\s\"]+", text)
    return " ".join(f'"{w}"' for w in words if re.search(r"\w", w))
