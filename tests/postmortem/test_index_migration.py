"""An index written by an older infersight (one column for the whole body, no schema version)
keeps working: it is migrated on open in one transaction, every row kept, and saved."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from pm_samples import cache_only, incident_0217

from infersight.postmortem import Index, new, scan, search
from infersight.postmortem import index_schema as schema
from infersight.postmortem.inputs import Incident

INDEX = ".postmortem-index.sqlite"
#: the index as version 1 wrote it, word for word
V1 = """
CREATE TABLE files (path TEXT PRIMARY KEY, sha256 TEXT NOT NULL);
CREATE VIRTUAL TABLE docs USING fts5(
    id UNINDEXED, path UNINDEXED, title, root_causes, signals, layers, services, body,
    tokenize = 'porter unicode61'
);
"""


def _v1_index(library: Path) -> int:
    """Write the library's index as version 1 did; the rows written."""
    conn = sqlite3.connect(":memory:")
    conn.executescript(V1)
    entries = scan(library).entries
    for e in entries:
        rel = str(e.path.relative_to(library))
        f = e.front
        conn.execute("INSERT INTO files VALUES (?, ?)", (rel, e.sha256))
        conn.execute(
            "INSERT INTO docs VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (f.id, rel, f.title, " ".join(f.root_causes), " ".join(f.signals),
             " ".join(f.layers), " ".join(f.services), e.body),
        )  # fmt: skip
    conn.commit()
    (library / INDEX).unlink(missing_ok=True)
    (library / INDEX).write_bytes(conn.serialize())
    return len(entries)


def _saved(library: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:")
    conn.deserialize((library / INDEX).read_bytes())
    return conn


@pytest.fixture
def library(tmp_path: Path) -> Path:
    new(Incident(incident_0217()), tmp_path)
    new(Incident(cache_only()), tmp_path)
    return tmp_path


def test_an_old_index_is_migrated_on_open_and_saved(library: Path) -> None:
    rows = _v1_index(library)
    index = Index.open(library, scan(library))
    try:
        assert index.sync.migrated and not index.sync.rebuilt and index.sync.saved
        assert f"{rows} rows kept" in index.sync.note
        hits = index.search("cache capacity", 10)
    finally:
        index.close()
    assert [h.id for h in hits][:1] == ["2026-03-14-cache-capacity"]
    assert "root_causes" in hits[0].fields
    saved = _saved(library)
    assert schema.version(saved) == schema.VERSION
    assert saved.execute("SELECT count(*) FROM docs").fetchone()[0] == rows
    symptoms = saved.execute("SELECT symptoms FROM docs").fetchall()
    assert all("Queue backlog" in s for (s,) in symptoms)  # the body was cut into its parts
    again = Index.open(library, scan(library))  # the next open finds it current
    assert not again.sync.migrated and not again.sync.rebuilt
    again.close()


def test_a_migration_that_fails_half_way_rolls_back_whole(
    library: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rows = _v1_index(library)
    conn = _saved(library)
    calls = []

    def split_then_fail(body: str) -> object:
        calls.append(body)
        if len(calls) == 2:
            raise RuntimeError("disk on fire")
        return schema.split(body)

    monkeypatch.setattr(schema, "split", split_then_fail)
    with pytest.raises(RuntimeError):
        schema.migrate(conn)
    # nothing of it stayed: the old table, all its rows, no new table, no new version
    assert schema.version(conn) == 1
    assert conn.execute("SELECT count(*) FROM docs").fetchone()[0] == rows
    names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
    assert "docs_v2" not in names
    assert conn.execute("SELECT count(*) FROM docs WHERE docs MATCH 'vector'").fetchone()[0]


def test_a_library_with_an_old_index_still_searches_from_the_cli_side(library: Path) -> None:
    _v1_index(library)
    hits, _, index = search(library, "vector swap", 5)
    assert hits[0].id == "2026-03-14-vector-db-swap" and index.sync.migrated
