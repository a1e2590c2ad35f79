"""Limits declared in `infersight.limits` are enforced on reading a bundle before any allocation
they guard: declared grids, member sizes, a folder without a manifest, deep JSON, a FIFO."""

from __future__ import annotations

import gzip
import io
import json
import os
import tarfile
import threading
from pathlib import Path

import pytest
from bundle_helpers import make_frame

from infersight.bundle import BundleError, read_bundle, write_bundle
from infersight.bundle.table import frame_to_parquet, parquet_to_frame
from infersight.limits import LimitError, Limits, current, parse_limits


def _bundle(tmp_path: Path) -> Path:
    return write_bundle(tmp_path / "b", {"incident": make_frame()}, {"kind": "test"})


def _declare_points(folder: Path, points: int) -> None:
    """Rewrite the manifest so the incident window declares `points` grid points."""
    path = folder / "manifest.json"
    doc = json.loads(path.read_text())
    w = doc["windows"]["incident"]
    w["end"] = w["start"] + w["step"] * (points - 1)
    path.write_text(json.dumps(doc))


# 10**10 at 15 s ends in the year 6700: more ends past 9999, refused for that first
@pytest.mark.parametrize("points", [10**6, 10**10])
def test_a_huge_declared_grid_is_refused_before_allocating(tmp_path: Path, points: int) -> None:
    folder = _bundle(tmp_path)
    _declare_points(folder, points)
    with pytest.raises(BundleError, match=r"grid points, over the 100,000 limit.*--raise-limit"):
        read_bundle(folder)


def test_values_of_a_window_are_capped(tmp_path: Path) -> None:
    folder = _bundle(tmp_path)
    with pytest.raises(BundleError, match=r"values .* over the 100 limit; raise it"):
        read_bundle(folder, Limits(grid_values=100))
    assert read_bundle(folder, Limits()).frame.n == 40


def test_the_limits_can_be_raised_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = _bundle(tmp_path)
    _declare_points(folder, 200_000)
    with pytest.raises(BundleError, match="grid_points"):
        read_bundle(folder)
    monkeypatch.setenv("INFERSIGHT_LIMITS", "grid_points=300000")
    assert read_bundle(folder).frame.n == 200_000


def test_parquet_rows_are_checked_from_the_footer() -> None:
    data = frame_to_parquet(make_frame())
    with pytest.raises(ValueError, match=r"rows .* over the 10-value limit"):
        parquet_to_frame(data, 1_700_000_000.0, 15.0, 40, max_values=10)


def test_a_folder_without_manifest_is_refused_before_reading(tmp_path: Path) -> None:
    folder = tmp_path / "not-a-bundle"
    folder.mkdir()
    (folder / "huge.bin").write_bytes(bytes(2 << 20))  # over the member cap below
    small = Limits(member_bytes=1 << 20)
    with pytest.raises(BundleError, match=r"no manifest\.json; not an infersight bundle"):
        read_bundle(folder, small)


def test_a_member_header_over_the_default_cap_is_refused_unread(tmp_path: Path) -> None:
    """A header declaring 900 MB: refused by the default 256 MiB cap, not read until truncated."""
    info = tarfile.TarInfo("metrics/incident.parquet")
    info.size = 900 * 10**6
    raw = info.tobuf(tarfile.PAX_FORMAT) + bytes(4096)
    path = tmp_path / "big.tar.gz"
    path.write_bytes(gzip.compress(raw))
    with pytest.raises(BundleError, match=r"over the 268435456-byte cap; raise it"):
        read_bundle(path)


def test_deep_json_in_the_manifest_is_one_line(tmp_path: Path) -> None:
    folder = _bundle(tmp_path)
    text = (folder / "manifest.json").read_text().rstrip().removesuffix("}")
    (folder / "manifest.json").write_text(text + ', "notes": ' + "[" * 5000 + "]" * 5000 + "}")
    with pytest.raises(
        BundleError, match="nested 5001 levels deep, over the limit of 64; raise it"
    ):
        read_bundle(folder)


def test_a_fifo_as_a_bundle_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "b.tar.gz"
    os.mkfifo(fifo)
    outcome: list[BaseException | None] = []

    def read() -> None:
        try:
            read_bundle(fifo)
        except BaseException as exc:
            outcome.append(exc)
        else:
            outcome.append(None)

    t = threading.Thread(target=read, daemon=True)
    t.start()
    t.join(10)
    if t.is_alive():  # unblock the reader so the test run can end
        with open(fifo, "wb") as w:
            w.write(b"x")
    assert outcome, "read_bundle blocked on a FIFO"
    assert isinstance(outcome[0], BundleError) and "not a regular file" in str(outcome[0])


def test_tar_member_not_listed_after_the_manifest_is_refused(tmp_path: Path) -> None:
    folder = _bundle(tmp_path)
    path = tmp_path / "t.tar.gz"
    with tarfile.open(path, "w:gz") as tar:
        tar.add(folder / "manifest.json", "manifest.json")
        data = bytes(1000)
        info = tarfile.TarInfo("artifacts/extra")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    # refused for not being listed, before its size (over this cap) is even considered
    with pytest.raises(BundleError, match="artifacts/extra: not listed"):
        read_bundle(path, Limits(member_bytes=800))


def test_limit_flags_parse_and_refuse_nonsense(monkeypatch: pytest.MonkeyPatch) -> None:
    assert parse_limits(["response_bytes=512MiB", "json_depth=100"]).response_bytes == 512 << 20
    assert parse_limits(["grid_points=2e5"]).grid_points == 200_000
    for bad in ("nope=1", "grid_points", "grid_points=-1", "grid_points=1 parsec"):
        with pytest.raises(LimitError):
            parse_limits([bad])
    monkeypatch.setenv("INFERSIGHT_LIMITS", "members=x")
    with pytest.raises(LimitError, match="INFERSIGHT_LIMITS"):
        current()


def test_an_uncountable_declared_grid_is_one_line(tmp_path: Path) -> None:
    """Found by the fuzz suite: an end/step ratio past float range raised OverflowError."""
    folder = _bundle(tmp_path)
    path = folder / "manifest.json"
    doc = json.loads(path.read_text())
    doc["windows"]["incident"].update(start=0.0, end=2.4e41, step=1.3e-267)
    path.write_text(json.dumps(doc))
    with pytest.raises(BundleError, match="countable number of points"):
        read_bundle(folder)


def test_a_window_dated_after_its_own_capture_is_refused(tmp_path: Path) -> None:
    # timestamps in the wrong unit or a clock in the wrong year: every reading is misdated
    folder = _bundle(tmp_path)
    path = folder / "manifest.json"
    doc = json.loads(path.read_text())
    doc["created_at"] = "2001-01-01T00:00:00Z"
    path.write_text(json.dumps(doc))
    with pytest.raises(BundleError, match=r"ends at .* after the bundle was made .*ahead_s"):
        read_bundle(folder)
    assert read_bundle(folder, Limits(ahead_s=10**10)).frame.n == 40
