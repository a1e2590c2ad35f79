"""The full-text index: SQLite FTS5 over the library's files, which stay the source of truth.

The index is a cache in the library folder. Whenever the files differ from what it was built
from (a file added, edited or removed: compared by path and sha256), it is rebuilt from all of
them in memory and written in one piece through `safe_write` (readers see the old index or
the new one). A damaged index, or a folder that takes no file, only means building in memory.
An index of an older schema is migrated on open, in one transaction that keeps every row.

Ranking: each body is cut into its symptoms, the text about other causes (ruled out, seen
before) and the rest (`sections.py`), each a column. A row ranks by the sum, over the search
words, of the weight of the best column holding each word (`SearchWeights`), then by bm25:
bm25 alone cannot do it, since a word every draft holds (every cause is ruled out in every
draft) has an inverse document frequency of nearly nothing in every column.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from infersight import userfile
from infersight.postmortem.config import PostmortemConfig, SearchWeights
from infersight.postmortem.index_schema import COLUMNS, SCHEMA, VERSION, migrate, version
from infersight.postmortem.library import Entry, Scan
from infersight.postmortem.sections import split
from infersight.safe_write import OutputError, check_target, write_bytes

#: how each indexed column is named to a reader, in the order they are shown
FIELD_NAMES = {
    "title": "title",
    "root_causes": "root causes",
    "symptoms": "symptoms",
    "signals": "signals",
    "layers": "layers",
    "services": "services",
    "body": "body",
    "ruled_out": "ruled out",
}
#: the columns a snippet is cut from (the short ones, lists of names, say it by their name)
_PROSE = ("symptoms", "body", "ruled_out")


@dataclass(frozen=True)
class Hit:
    id: str
    path: str
    title: str
    score: float  # the sum over the words of the best field's weight; higher is better
    snippet: str
    #: the fields holding a search word, the weightiest first (FIELD_NAMES' keys)
    fields: tuple[str, ...] = ()
    bm25: float = 0.0  # FTS5's bm25 with the same weights; lower is better

    @property
    def ruled_out_only(self) -> bool:
        """The words are found only where the draft names what the incident was not."""
        return self.fields == ("ruled_out",)

    @property
    def why(self) -> str:
        """Where it matched, in words: "root causes, title, body"."""
        return ", ".join(FIELD_NAMES[f] for f in self.fields)

    def to_dict(self) -> dict[str, object]:
        return {
            "id": self.id,
            "path": self.path,
            "title": self.title,
            "score": self.score,
            "matched_in": [FIELD_NAMES[f] for f in self.fields],
            "ruled_out_only": self.ruled_out_only,
            "snippet": self.snippet,
        }


@dataclass(frozen=True)
class Sync:
    """What opening the index did: whether it was rebuilt, and whether it could be saved."""

    rebuilt: bool
    saved: bool
    note: str = ""
    migrated: bool = False


def _state(entries: Sequence[Entry], root: Path) -> dict[str, str]:
    return {str(e.path.relative_to(root)): e.sha256 for e in entries}


def _build(entries: Sequence[Entry], root: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:")
    conn.executescript(SCHEMA)
    for e in entries:
        rel = str(e.path.relative_to(root))
        f = e.front
        parts = split(e.body)
        conn.execute("INSERT INTO files VALUES (?, ?)", (rel, e.sha256))
        conn.execute(
            f"INSERT INTO docs VALUES ({', '.join('?' * len(COLUMNS))})",
            (
                f.id,
                rel,
                f.title,
                " ".join(f.root_causes),
                parts.symptoms,
                " ".join(f.signals),
                " ".join(f.layers),
                " ".join(f.services),
                parts.body,
                parts.ruled_out,
            ),
        )
    conn.execute(f"PRAGMA user_version = {VERSION}")
    conn.commit()
    return conn


def _load(path: Path) -> tuple[sqlite3.Connection | None, str]:
    """The saved index (migrated to this schema when older), or None when there is none or it
    cannot be used; and a note when it was migrated."""
    try:
        check_target(path, "file")
        if not path.exists():
            return None, ""
        conn = sqlite3.connect(":memory:")
        conn.deserialize(userfile.read_bytes(path))
        conn.execute("SELECT count(*) FROM docs").fetchone()
        note = ""
        if version(conn) < VERSION:
            note = migrate(conn)
        elif version(conn) > VERSION:
            return None, ""  # made by a newer infersight: build one of ours in memory
        return conn, note
    except (OSError, OutputError, sqlite3.Error, userfile.UserFileError):
        return None, ""


def _saved_state(conn: sqlite3.Connection) -> dict[str, str] | None:
    try:
        return {p: s for p, s in conn.execute("SELECT path, sha256 FROM files")}
    except sqlite3.Error:
        return None


def _save(path: Path, conn: sqlite3.Connection) -> str:
    """Empty when saved, else why not (the index then lives in memory for this command)."""
    try:
        write_bytes(path, conn.serialize())
    except (OutputError, OSError) as exc:
        return f"index kept in memory only: {exc}"
    return ""


class Index:
    """An open index over one scan of the library."""

    def __init__(
        self, conn: sqlite3.Connection, sync: Sync, weights: SearchWeights | None = None
    ) -> None:
        self._conn = conn
        self.sync = sync
        self.weights = weights or SearchWeights()

    @classmethod
    def open(cls, root: Path, scan: Scan, cfg: PostmortemConfig | None = None) -> Index:
        cfg = cfg or PostmortemConfig()
        path = root / cfg.index_name
        want = _state(scan.entries, root)
        conn, migrated = _load(path)
        if conn is not None and _saved_state(conn) == want:
            if not migrated:
                return cls(conn, Sync(rebuilt=False, saved=True), cfg.search)
            why = _save(path, conn)
            note = "; ".join(n for n in (migrated, why) if n)
            return cls(conn, Sync(False, not why, note, migrated=True), cfg.search)
        if conn is not None:
            conn.close()
        conn = _build(scan.entries, root)
        why = _save(path, conn)
        return cls(conn, Sync(True, not why, why, migrated=bool(migrated)), cfg.search)

    def close(self) -> None:
        self._conn.close()

    def search(self, text: str, limit: int | None = 10) -> list[Hit]:
        """Postmortems holding every word of `text` (stemmed; any case), best first: by the
        fields the words are found in, then bm25. Rows whose words are all only among what
        was ruled out come after every other."""
        words = _words(text)
        if not words:
            return []
        query = " ".join(f'"{w}"' for w in words)
        w = [getattr(self.weights, c) for c in COLUMNS[2:]]
        bm25 = "bm25(docs, 0, 0, " + ", ".join(f"{x:g}" for x in w) + ")"
        rows = self._conn.execute(
            f"SELECT rowid, id, path, title, {bm25} FROM docs WHERE docs MATCH ?", (query,)
        ).fetchall()
        if not rows:
            return []
        found = {c: [self._holding(c, word) for word in words] for c in COLUMNS[2:]}
        hits = [self._hit(r, words, found, query) for r in rows]
        hits.sort(key=lambda h: (-h.score, h.bm25, h.id))
        return hits if limit is None else hits[:limit]

    def _holding(self, column: str, word: str) -> set[int]:
        """The rows whose `column` holds `word`."""
        sql = "SELECT rowid FROM docs WHERE docs MATCH ?"
        return {r[0] for r in self._conn.execute(sql, (f'{{{column}}} : "{word}"',))}

    def _hit(
        self,
        row: tuple[int, str, str, str, float],
        words: list[str],
        found: dict[str, list[set[int]]],
        query: str,
    ) -> Hit:
        rowid = row[0]
        per_column = {c: sum(rowid in s for s in sets) for c, sets in found.items()}
        score = 0.0
        for i in range(len(words)):
            holding = [getattr(self.weights, c) for c, sets in found.items() if rowid in sets[i]]
            score += max(holding, default=0.0)
        fields = tuple(
            sorted(
                (c for c, n in per_column.items() if n),
                key=lambda c: (-getattr(self.weights, c), COLUMNS.index(c)),
            )
        )
        return Hit(
            row[1], row[2], row[3], score, self._snippet(rowid, query, per_column), fields, row[4]
        )

    def _snippet(self, rowid: int, query: str, per_column: dict[str, int]) -> str:
        """From the prose about the incident holding the most words, else from what it ruled
        out, else the title: the snippet shows what the incident was where it can."""
        own = [c for c in _PROSE if c != "ruled_out" and per_column[c]]
        column = max(own, key=lambda c: (per_column[c], getattr(self.weights, c)), default="")
        if not column:
            column = "ruled_out" if per_column["ruled_out"] else "title"
        index = COLUMNS.index(column)
        row = self._conn.execute(
            f"SELECT snippet(docs, {index}, '[', ']', ' … ', 12) FROM docs "
            "WHERE docs MATCH ? AND rowid = ?",
            (query, rowid),
        ).fetchone()
        return _plain(row[0] if row else "")


def _plain(snippet: object) -> str:
    """A snippet on one line, without the Markdown escapes the drafts put before `_` and `*`."""
    return re.sub(r"\\([\\`*_{}<>|#])", r"\1", " ".join(str(snippet).split()))


def _words(text: str) -> list[str]:
    """The user's words, quotes dropped, each once; those with no letter or digit dropped."""
    words = re.findall(r"[^\s\"]+", text)
    return list(dict.fromkeys(w for w in words if re.search(r"\w", w)))


def match_query(text: str) -> str:
    """User words as an FTS5 query that cannot be a syntax error: each word a quoted string
    (quotes are dropped), all of them required. `vector_db_swap` stays one phrase."""
    return " ".join(f'"{w}"' for w in _words(text))
