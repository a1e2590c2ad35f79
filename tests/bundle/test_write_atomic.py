"""Writing refuses bad requests up front and never leaves a half-written result."""

from __future__ import annotations

import os
import tarfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from bundle_helpers import assert_frames_equal, make_frame

from infersight.bundle import BundleError, read_bundle, write_bundle
from infersight.bundle import write as write_mod
from infersight.frame import MetricFrame

SOURCE = {"kind": "simulator"}
KINDS = ["b.tar.gz", "b"]


def listing(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


@pytest.mark.parametrize("name", KINDS)
def test_existing_target_is_not_clobbered(tmp_path: Path, name: str, frame: MetricFrame) -> None:
    path = write_bundle(tmp_path / name, {"incident": frame}, SOURCE)
    before = listing(tmp_path)
    with pytest.raises(BundleError, match="already exists"):
        write_bundle(path, {"incident": make_frame(seed=5)}, SOURCE)
    assert listing(tmp_path) == before
    assert_frames_equal(read_bundle(path).frame, frame)


@pytest.mark.parametrize("name", KINDS)
def test_overwrite_replaces(tmp_path: Path, name: str, frame: MetricFrame) -> None:
    path = write_bundle(tmp_path / name, {"incident": frame}, SOURCE)
    other = make_frame(seed=5)
    write_bundle(path, {"incident": other}, SOURCE, overwrite=True)
    assert_frames_equal(read_bundle(path).frame, other)
    assert [p.name for p in tmp_path.iterdir()] == [name]


def test_overwrite_replaces_other_kind(tmp_path: Path, frame: MetricFrame) -> None:
    target = tmp_path / "b.tar.gz"
    target.mkdir()  # a directory bundle, even a damaged one, may be replaced
    (target / "manifest.json").write_text("{}")
    (target / "junk").write_text("x")
    write_bundle(target, {"incident": frame}, SOURCE, overwrite=True)
    assert target.is_file() and tarfile.is_tarfile(target)


@pytest.mark.parametrize("name", KINDS)
def test_overwrite_never_deletes_a_directory_that_is_not_a_bundle(
    tmp_path: Path, name: str, frame: MetricFrame
) -> None:
    # `pull -o ~/incidents --overwrite` must not wipe the folder it was meant to write into
    target = tmp_path / name
    (target / "notes").mkdir(parents=True)
    (target / "notes" / "thesis.txt").write_text("years of work")
    before = listing(tmp_path)
    with pytest.raises(BundleError, match="not an infersight bundle"):
        write_bundle(target, {"incident": frame}, SOURCE, overwrite=True)
    assert listing(tmp_path) == before
    assert (target / "notes" / "thesis.txt").read_text() == "years of work"


def test_overwrite_may_fill_an_empty_directory(tmp_path: Path, frame: MetricFrame) -> None:
    target = tmp_path / "b"
    target.mkdir()
    write_bundle(target, {"incident": frame}, SOURCE, overwrite=True)
    assert_frames_equal(read_bundle(target).frame, frame)


@pytest.mark.parametrize("name", KINDS)
@pytest.mark.parametrize("overwrite", [False, True])
def test_failure_midway_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, overwrite: bool
) -> None:
    old = make_frame(seed=9)
    if overwrite:
        write_bundle(tmp_path / name, {"incident": old}, SOURCE)
    before = listing(tmp_path)

    def broken_fsync(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(write_mod.os, "fsync", broken_fsync)
    with pytest.raises(BundleError, match="No space left on device"):
        write_bundle(tmp_path / name, {"incident": make_frame()}, SOURCE, overwrite=overwrite)
    monkeypatch.undo()
    assert listing(tmp_path) == before
    if overwrite:
        assert_frames_equal(read_bundle(tmp_path / name).frame, old)


@pytest.mark.parametrize("name", KINDS)
def test_parquet_writer_crash_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    def boom(*_: Any) -> bytes:
        raise RuntimeError("parquet writer crashed")

    monkeypatch.setattr(write_mod, "frame_to_parquet", boom)
    with pytest.raises(RuntimeError):
        write_bundle(tmp_path / name, {"incident": make_frame()}, SOURCE)
    assert listing(tmp_path) == []


def test_crash_while_adding_tar_members_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = tarfile.TarFile.addfile
    calls = []

    def flaky(self: tarfile.TarFile, info: tarfile.TarInfo, fileobj: Any = None) -> None:
        calls.append(info.name)
        if len(calls) == 2:
            raise KeyboardInterrupt
        real(self, info, fileobj)

    monkeypatch.setattr(tarfile.TarFile, "addfile", flaky)
    with pytest.raises(KeyboardInterrupt):
        write_bundle(tmp_path / "b.tgz", {"incident": make_frame()}, SOURCE)
    assert listing(tmp_path) == []


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"windows": {"baseline-1d": make_frame()}}, "needs a window named 'incident'"),
        ({"artifacts": {"../evil": b"x"}}, "bad artifact name"),
        ({"artifacts": {"/etc/passwd": b"x"}}, "absolute path"),
        ({"artifacts": {"a\\b": b"x"}}, "backslash"),
        ({"artifacts": {"a//b": b"x"}}, "empty"),
        ({"source": {"url": "http://x"}}, "source: .*kind"),
        ({"missing": {"service.nope": "?"}}, "unknown canonical signal.*service.nope"),
        ({"windows": {"incident": MetricFrame(0, 15, 0)}}, "no grid points"),
        ({"windows": {"incident": MetricFrame(0, 15, 3), "bad name!": MetricFrame(0, 15, 3)}},
         "bad window name"),
        (
            {"windows": {"incident": make_frame().with_series("x.y", ["a"], np.ones((1, 40)))}},
            r"unknown canonical signal\(s\): x.y",
        ),
    ],
)  # fmt: skip
def test_bad_requests_are_refused_before_writing(
    tmp_path: Path, kwargs: dict[str, Any], message: str
) -> None:
    args: dict[str, Any] = {"windows": {"incident": make_frame()}, "source": SOURCE, **kwargs}
    with pytest.raises(BundleError, match=message):
        write_bundle(tmp_path / "b.tar.gz", **args)
    assert listing(tmp_path) == []


def test_missing_parent_directory(tmp_path: Path) -> None:
    with pytest.raises(BundleError, match="does not exist"):
        write_bundle(tmp_path / "no" / "b.tgz", {"incident": make_frame()}, SOURCE)


def test_written_files_are_readable_by_others(tmp_path: Path) -> None:
    path = write_bundle(tmp_path / "b.tgz", {"incident": make_frame()}, SOURCE)
    assert os.stat(path).st_mode & 0o777 == 0o644
