"""The index's schema, its version (SQLite's `user_version`) and the migration of older ones.

Version 1 (no `user_version` set) kept each body whole in one column; version 2 cuts it into
symptoms, what was ruled out, and the rest (`sections.py`), so the search can weigh them apart.
A migration runs in one transaction: the new table is filled from every old row, the counts
are compared, and only then is the old table replaced; anything short of that rolls back and
the index is rebuilt from the files instead.
"""

from __future__ import annotations

import sqlite3

from infersight.postmortem.sections import split

VERSION = 2
#: id and path are kept, not indexed; the rest in the order of the bm25 weights
COLUMNS = (
    "id",
    "path",
    "title",
    "root_causes",
    "symptoms",
    "signals",
    "layers",
    "services",
    "body",
    "ruled_out",
)
#: porter: "swapped" finds "swap"; unicode61 splits `vector_db_swap` into its words
_DOCS = (
    "CREATE VIRTUAL TABLE {name} USING fts5(id UNINDEXED, path UNINDEXED, "
    + ", ".join(COLUMNS[2:])
    + ", tokenize = 'porter unicode61')"
)
SCHEMA = (
    "CREATE TABLE files (path TEXT PRIMARY KEY, sha256 TEXT NOT NULL);\n"
    + _DOCS.format(name="docs")
    + ";\n"
)
#: the columns of version 1, as it stored them
_V1 = ("id", "path", "title", "root_causes", "signals", "layers", "services", "body")


class MigrationError(sqlite3.DatabaseError):
    """The old index could not be carried over whole; it is rebuilt from the files."""


def version(conn: sqlite3.Connection) -> int:
    """The schema version of an open index (1 for one made before versions were recorded)."""
    v = int(conn.execute("PRAGMA user_version").fetchone()[0])
    return v or 1


def _columns(conn: sqlite3.Connection) -> tuple[str, ...]:
    return tuple(r[1] for r in conn.execute("PRAGMA table_info(docs)"))


def migrate(conn: sqlite3.Connection) -> str:
    """Carry an older index over to this schema in one transaction; a note of what it did.
    Raises MigrationError (the transaction rolled back) when a row would be lost."""
    if _columns(conn) != _V1:
        raise MigrationError(f"unknown index layout {_columns(conn)}")
    before = int(conn.execute("SELECT count(*) FROM docs").fetchone()[0])
    level = conn.isolation_level
    conn.isolation_level = None  # the transaction is ours, statement by statement
    try:
        conn.execute("BEGIN IMMEDIATE")
        conn.execute(_DOCS.format(name="docs_v2"))
        rows = conn.execute(f"SELECT {', '.join(_V1)} FROM docs").fetchall()
        for pid, path, title, roots, signals, layers, services, body in rows:
            parts = split(body or "")
            conn.execute(
                f"INSERT INTO docs_v2 VALUES ({', '.join('?' * len(COLUMNS))})",
                (pid, path, title, roots, parts.symptoms, signals, layers, services,
                 parts.body, parts.ruled_out),
            )  # fmt: skip
        after = int(conn.execute("SELECT count(*) FROM docs_v2").fetchone()[0])
        if after != before:
            raise MigrationError(f"{after} rows carried over of {before}")
        conn.execute("DROP TABLE docs")
        conn.execute("ALTER TABLE docs_v2 RENAME TO docs")
        conn.execute(f"PRAGMA user_version = {VERSION}")
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    finally:
        conn.isolation_level = level
    return f"index migrated to schema {VERSION} ({before} rows kept)"
