"""The FTS5 index: a cache of the files, rebuilt whenever they change, never the truth."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from pm_samples import cache_only, incident_0217

from infersight.postmortem import new, scan, search
from infersight.postmortem.index import Index, match_query
from infersight.postmortem.inputs import Incident

INDEX = ".postmortem-index.sqlite"


def _ids(folder: Path, text: str) -> list[str]:
    hits, _, _ = search(folder, text, 10)
    return [h.id for h in hits]


@pytest.fixture
def library(tmp_path: Path) -> Path:
    new(Incident(incident_0217()), tmp_path)
    new(Incident(cache_only()), tmp_path)
    return tmp_path


def test_words_find_postmortems_stemmed_and_in_any_case(library: Path) -> None:
    # the cache-only draft names the other under "Seen before": both hold the words, the
    # one whose title and root causes hold them comes first
    assert _ids(library, "VECTOR swapping")[0] == "2026-03-14-vector-db-swap"
    assert _ids(library, "infra.swap_in_rate") == ["2026-03-14-vector-db-swap"]
    assert sorted(_ids(library, "cache_capacity")) == [
        "2026-03-14-cache-capacity",
        "2026-03-14-vector-db-swap",
    ]
    assert _ids(library, "nothing-like-this-anywhere") == []


def test_the_index_follows_edits_additions_and_removals(library: Path) -> None:
    _ids(library, "cache")  # builds and saves it
    saved = (library / INDEX).stat().st_mtime_ns
    assert _ids(library, "cache") and (library / INDEX).stat().st_mtime_ns == saved  # unchanged
    path = library / "2026-03-14-cache-capacity.md"
    path.write_text(path.read_text().replace("_to fill in_", "raised maxmemory to 12 GiB", 1))
    assert _ids(library, "maxmemory") == ["2026-03-14-cache-capacity"]
    path.unlink()
    assert _ids(library, "maxmemory") == []
    (library / "2026-04-01-manual.md").write_text(
        "---\nid: 2026-04-01-manual\ntitle: Written by hand\ndate: 2026-04-01\n---\n"
        "The reranker timed out.\n"
    )
    assert _ids(library, "reranker") == ["2026-04-01-manual"]


def test_a_damaged_index_is_rebuilt_from_the_files(library: Path) -> None:
    (library / INDEX).write_bytes(b"not a database at all" * 100)
    assert _ids(library, "vector")[0] == "2026-03-14-vector-db-swap"
    index = Index.open(library, scan(library))
    assert not index.sync.rebuilt  # the rebuilt one was saved over the damaged one
    index.close()


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_a_read_only_library_is_searched_in_memory(library: Path) -> None:
    (library / INDEX).unlink(missing_ok=True)
    library.chmod(0o555)
    try:
        hits, _, index = search(library, "vector", 5)
        assert hits[0].id == "2026-03-14-vector-db-swap"
        assert not index.sync.saved and "memory" in index.sync.note
    finally:
        library.chmod(0o755)


def test_a_symlinked_index_is_never_followed(
    library: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    elsewhere = tmp_path_factory.mktemp("x") / "precious"
    elsewhere.write_text("keep me")
    (library / INDEX).unlink(missing_ok=True)
    (library / INDEX).symlink_to(elsewhere)
    hits, _, index = search(library, "vector", 5)
    assert hits[0].id == "2026-03-14-vector-db-swap"
    assert elsewhere.read_text() == "keep me" and not index.sync.saved


@pytest.mark.parametrize("text", ["AND OR NOT (", '"unbalanced', "col:vector", "*", "NEAR(a b)"])
def test_query_syntax_in_user_text_is_never_an_error(library: Path, text: str) -> None:
    search(library, text, 5)  # no sqlite3.OperationalError
    assert '"' not in match_query(text).replace('" "', "").strip('"')


def test_an_index_path_taken_by_a_folder_is_left_alone_and_searched_in_memory(
    library: Path,
) -> None:
    (library / INDEX).unlink(missing_ok=True)
    (library / INDEX).mkdir()
    (library / INDEX / "keep").write_text("mine")
    hits, _, index = search(library, "vector", 5)
    assert hits[0].id == "2026-03-14-vector-db-swap"
    assert not index.sync.saved and "memory" in index.sync.note
    assert (library / INDEX / "keep").read_text() == "mine"
