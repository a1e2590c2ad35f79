"""The library folder: damaged files named one by one, the rest read; writers never lose a file."""

from __future__ import annotations

import multiprocessing as mp
import os
from pathlib import Path

import pytest
from pm_samples import incident_0217

from infersight.postmortem import LibraryError, add, new, scan
from infersight.postmortem.draft import body, front_matter
from infersight.postmortem.inputs import Incident

WRITERS = 8


def _write(folder: str, barrier: mp.synchronize.Barrier, out: mp.Queue) -> None:  # type: ignore[type-arg]
    inc = Incident(incident_0217())
    fm, text = front_matter(inc), body(inc)
    barrier.wait()
    out.put(str(add(folder, fm, text).path))


def test_concurrent_writers_each_keep_their_file(tmp_path: Path) -> None:
    ctx = mp.get_context("spawn" if os.name != "posix" else "fork")
    barrier, out = ctx.Barrier(WRITERS), ctx.Queue()
    procs = [ctx.Process(target=_write, args=(str(tmp_path), barrier, out)) for _ in range(WRITERS)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    assert [p.exitcode for p in procs] == [0] * WRITERS
    paths = {out.get(timeout=5) for _ in range(WRITERS)}
    lib = scan(tmp_path)
    assert len(paths) == WRITERS and not lib.problems
    assert {str(e.path) for e in lib.entries} == paths
    assert sorted(e.front.id for e in lib.entries)[0] == "2026-03-14-vector-db-swap"


def test_add_never_overwrites_and_takes_the_next_suffix(tmp_path: Path) -> None:
    inc = Incident(incident_0217())
    first, _ = new(inc, tmp_path)
    first.path.write_text(first.path.read_text() + "\nEdited by hand.\n")
    second, _ = new(inc, tmp_path)
    assert first.path.name == "2026-03-14-vector-db-swap.md"
    assert second.path.name == "2026-03-14-vector-db-swap-2.md"
    assert "Edited by hand." in first.path.read_text()
    # the second draft points at the first as seen before
    assert (
        "2026-03-14-vector-db-swap," in second.body or "(2026-03-14-vector-db-swap," in second.body
    )
    assert (tmp_path / ".gitignore").read_text().count(".postmortem-index.sqlite") == 1


def test_a_symlink_on_the_id_is_passed_over_not_followed(tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "2026-03-14-vector-db-swap.md").symlink_to(victim)
    entry, _ = new(Incident(incident_0217()), lib)
    assert entry.path.name == "2026-03-14-vector-db-swap-2.md"
    assert victim.read_text() == "keep me"


def test_damaged_files_are_reported_each_and_the_rest_read(tmp_path: Path) -> None:
    good, _ = new(Incident(incident_0217()), tmp_path)
    (tmp_path / "2026-01-01-no-fence.md").write_text("# notes without front matter\n")
    (tmp_path / "2026-01-02-bad-status.md").write_text(
        "---\nid: 2026-01-02-bad-status\ntitle: t\ndate: 2026-01-02\nstatus: done\n---\n"
    )
    (tmp_path / "binary.md").write_bytes(b"---\n\xff\xfe\n---\n")
    (tmp_path / "copy.md").write_text(good.path.read_text())  # the same id twice
    (tmp_path / "README.md").write_text("How we write postmortems.\n")
    sub = tmp_path / "2025"
    sub.mkdir()
    (sub / "old.md").write_text(
        "---\nid: 2025-05-01-old\ntitle: Old one\ndate: 2025-05-01\n---\nbody\n"
    )
    lib = scan(tmp_path)
    assert sorted(e.front.id for e in lib.entries) == ["2025-05-01-old", good.front.id]
    problems = {p.path.name: p.message for p in lib.problems}
    assert set(problems) == {"2026-01-01-no-fence.md", "2026-01-02-bad-status.md", "binary.md",
                             "copy.md"}  # fmt: skip
    assert "no front matter" in problems["2026-01-01-no-fence.md"]
    assert problems["2026-01-02-bad-status.md"].startswith("status:")
    assert "UTF-8" in problems["binary.md"]
    assert "already used" in problems["copy.md"]


def test_a_missing_library_is_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(LibraryError, match="no such library folder"):
        scan(tmp_path / "nowhere")
