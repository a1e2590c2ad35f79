"""Damaged or edited bundles are refused with one BundleError naming the member and problem."""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from bundle_helpers import make_frame

from infersight.bundle import BundleError, read_bundle, write_bundle

PARQUET = "metrics/incident.parquet"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return write_bundle(
        tmp_path / "b", {"incident": make_frame()}, {"kind": "test"}, artifacts={"a.txt": b"hi"}
    )


def manifest(folder: Path) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((folder / "manifest.json").read_text())
    return doc


def save_manifest(folder: Path, doc: dict[str, Any]) -> None:
    (folder / "manifest.json").write_text(json.dumps(doc))


def replace_member(folder: Path, member: str, data: bytes) -> None:
    """Replace a member and re-sign it, so only the deeper checks can catch the problem."""
    (folder / member).write_bytes(data)
    doc = manifest(folder)
    doc["members"][member] = hashlib.sha256(data).hexdigest()
    save_manifest(folder, doc)


def parquet(columns: dict[str, pa.Array]) -> bytes:
    buf = io.BytesIO()
    pq.write_table(pa.table(columns), buf)
    return buf.getvalue()


def good_columns(folder: Path) -> dict[str, pa.Array]:
    table = pq.read_table(folder / PARQUET)
    return {name: table.column(name).combine_chunks() for name in table.column_names}


def pack(folder: Path) -> Path:
    out = folder.with_name(folder.name + ".tar.gz")
    with tarfile.open(out, "w:gz") as tar:
        for p in sorted(folder.rglob("*")):
            if p.is_file():
                tar.add(p, arcname=str(p.relative_to(folder)))
    return out


def refused(path: Path, *patterns: str) -> str:
    with pytest.raises(BundleError) as info:
        read_bundle(path)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith("bundle ") and path.name in message.split(":")[0]
    for pattern in patterns:
        assert pattern in message, message
    return message


def test_flipped_byte_in_member(folder: Path) -> None:
    data = bytearray((folder / PARQUET).read_bytes())
    data[len(data) // 2] ^= 0xFF
    (folder / PARQUET).write_bytes(bytes(data))
    msg = refused(folder, f"member {PARQUET}: sha256 mismatch", "infersight pull")
    refused(pack(folder), f"member {PARQUET}: sha256 mismatch")
    assert "damaged or edited" in msg


def test_flipped_byte_in_tarball(folder: Path) -> None:
    tarball = pack(folder)
    data = bytearray(tarball.read_bytes())
    data[len(data) // 2] ^= 0xFF
    tarball.write_bytes(bytes(data))
    refused(tarball)


@pytest.mark.parametrize("cut", [8, 100, 0.5, -3])
def test_truncated_tarball(folder: Path, cut: float) -> None:
    tarball = pack(folder)
    data = tarball.read_bytes()
    end = int(len(data) * cut) if isinstance(cut, float) else cut
    tarball.write_bytes(data[:end])  # -3: only the gzip trailer is cut
    refused(tarball, "damaged or truncated")


def test_not_a_tarball(tmp_path: Path) -> None:
    path = tmp_path / "x.tar.gz"
    path.write_bytes(b"hello, not gzip")
    refused(path, "not a readable .tar.gz")


def test_absent(tmp_path: Path) -> None:
    refused(tmp_path / "nope.tar.gz", "does not exist")


EDITS: dict[str, tuple[Callable[[dict[str, Any]], None], tuple[str, ...]]] = {
    "schema 3": (lambda d: d.update(schema_version=3), ("schema_version 3", "upgrade")),
    "schema absent": (lambda d: d.pop("schema_version"), ("schema_version absent",)),
    "no instances": (lambda d: d.pop("instances"), ("instances: Field required",)),
    "extra field": (lambda d: d.update(colour="red"), ("colour: Extra inputs",)),
    "bad step": (lambda d: d["windows"]["incident"].update(step=0), ("windows.incident.step",)),
    "no incident": (
        lambda d: d.update(windows={"other": d["windows"].pop("incident")}),
        ("needs the main window 'incident'",),
    ),
    "unknown signal": (
        lambda d: d.update(signals=sorted([*d["signals"], "service.bogus"])),
        ("unknown canonical signal(s): service.bogus",),
    ),
    "unsorted signals": (lambda d: d["signals"].reverse(), ("signals", "sorted")),
    "local time": (
        lambda d: d.update(created_at="2024-01-01T10:00:00+02:00"),
        ("created_at", "UTC"),
    ),
    "no kind": (lambda d: d["source"].pop("kind"), ("source", "kind")),
    "bad digest": (lambda d: d["members"].update({"a.txt": "00"}), ("members",)),
    "escaping member": (
        lambda d: d["members"].update({"artifacts/../../x": "0" * 64}),
        ("members", "'..'"),
    ),
}


@pytest.mark.parametrize("case", sorted(EDITS))
def test_bad_manifest(folder: Path, case: str) -> None:
    edit, patterns = EDITS[case]
    doc = manifest(folder)
    edit(doc)
    save_manifest(folder, doc)
    refused(folder, "member manifest.json: ", *patterns)


def test_manifest_not_json(folder: Path) -> None:
    (folder / "manifest.json").write_text("{not json")
    refused(folder, "manifest.json", "not valid JSON")


def test_no_manifest(folder: Path) -> None:
    (folder / "manifest.json").unlink()
    refused(folder, "no manifest.json")


def test_extra_member(folder: Path) -> None:
    (folder / "artifacts" / "sneaky.sh").write_text("rm -rf /")
    refused(folder, "member artifacts/sneaky.sh: not listed in manifest.json")


def test_listed_member_absent(folder: Path) -> None:
    (folder / "artifacts" / "a.txt").unlink()
    refused(folder, "member artifacts/a.txt: listed in manifest.json but absent")


def test_edited_artifact(folder: Path) -> None:
    (folder / "artifacts" / "a.txt").write_text("ho")
    refused(folder, "member artifacts/a.txt: sha256 mismatch")


def test_wrong_parquet_type(folder: Path) -> None:
    cols = good_columns(folder)
    cols["value"] = pa.array(range(len(cols["value"])), pa.int64())
    replace_member(folder, PARQUET, parquet(cols))
    refused(folder, f"member {PARQUET}: column 'value' has type int64")


def test_wrong_ts_type(folder: Path) -> None:
    cols = good_columns(folder)
    cols["ts"] = cols["ts"].cast(pa.string())
    replace_member(folder, PARQUET, parquet(cols))
    refused(folder, "column 'ts' has type string")


def test_plain_string_columns_are_accepted(folder: Path) -> None:
    cols = good_columns(folder)
    cols["signal"] = cols["signal"].cast(pa.string())
    replace_member(folder, PARQUET, parquet(cols))
    assert read_bundle(folder).frame.signals


def test_wrong_columns(folder: Path) -> None:
    cols = good_columns(folder)
    cols["time"] = cols.pop("ts")
    replace_member(folder, PARQUET, parquet(cols))
    refused(folder, "columns", "expected ['ts', 'signal', 'instance', 'value']")


def test_not_parquet(folder: Path) -> None:
    replace_member(folder, PARQUET, b"PAR1 but not really")
    refused(folder, "not a readable Parquet file")


def test_point_off_grid(folder: Path) -> None:
    cols = good_columns(folder)
    ts = cols["ts"].to_pylist()
    ts[3] += 7.0
    cols["ts"] = pa.array(ts, pa.float64())
    replace_member(folder, PARQUET, parquet(cols))
    refused(folder, "off the window's grid")


def test_point_outside_window(folder: Path) -> None:
    cols = good_columns(folder)
    ts = cols["ts"].to_pylist()
    ts[0] = ts[0] + 15.0 * 1000
    cols["ts"] = pa.array(ts, pa.float64())
    replace_member(folder, PARQUET, parquet(cols))
    refused(folder, "off the window's grid")


def test_duplicate_point(folder: Path) -> None:
    cols = good_columns(folder)
    doubled = {k: pa.concat_arrays([v, v.slice(0, 1)]) for k, v in cols.items()}
    replace_member(folder, PARQUET, parquet(doubled))
    refused(folder, "has a point twice")


def test_dictionary_that_repeats_a_value_is_read_as_one_name(folder: Path) -> None:
    """A hand-made dictionary may list a name twice (pyarrow's writer merges the copies, other
    writers need not): both entries are the same signal, and a point under each at the same
    time and instance is a point twice."""
    cols = good_columns(folder)
    names = cols["signal"].cast(pa.string()).to_pylist()
    vocab = sorted(set(names))
    # every row points at the second copy of its name, except the first row's first copy
    dictionary = pa.array([*vocab, *vocab], pa.string())
    codes = [vocab.index(v) + len(vocab) for v in names]
    codes[0] = vocab.index(names[0])
    cols["signal"] = pa.DictionaryArray.from_arrays(pa.array(codes, pa.int32()), dictionary)
    replace_member(folder, PARQUET, parquet(cols))
    path = pack(folder)
    frame = read_bundle(path).windows["incident"]
    assert sorted(frame.signals) == vocab
    doubled = {k: pa.concat_arrays([v, v.slice(0, 1)]) for k, v in cols.items()}
    doubled["signal"] = pa.DictionaryArray.from_arrays(
        pa.array([*codes, codes[0] + len(vocab)], pa.int32()), dictionary
    )
    replace_member(folder, PARQUET, parquet(doubled))
    refused(folder, "has a point twice")


def test_signal_not_in_manifest(folder: Path) -> None:
    cols = good_columns(folder)
    sig = cols["signal"].cast(pa.string()).to_pylist()
    sig[0] = "service.e2e_latency_p99"
    cols["signal"] = pa.array(sig, pa.string())
    replace_member(folder, PARQUET, parquet(cols))
    refused(folder, "signal(s) not in manifest.json: service.e2e_latency_p99")


def test_unknown_signal_in_data_and_manifest(folder: Path) -> None:
    cols = good_columns(folder)
    sig = cols["signal"].cast(pa.string()).to_pylist()
    sig[0] = "service.bogus"
    cols["signal"] = pa.array(sig, pa.string())
    replace_member(folder, PARQUET, parquet(cols))
    doc = manifest(folder)
    doc["signals"] = sorted([*doc["signals"], "service.bogus"])
    save_manifest(folder, doc)
    refused(folder, "unknown canonical signal(s): service.bogus")


def test_a_window_dated_past_year_9999_is_refused_in_one_line(folder: Path) -> None:
    """Issue 38: a bundle dated in the year 318857 (epoch 1e13, milliseconds taken for seconds)
    reached the report, which cannot print such a date: internal error, exit 4."""
    import subprocess
    import sys

    cols = good_columns(folder)
    shift = 1e13 - manifest(folder)["windows"]["incident"]["start"]
    cols["ts"] = pa.array(cols["ts"].to_numpy() + shift)
    replace_member(folder, PARQUET, parquet(cols))  # the points on the grid of year 318857
    doc = manifest(folder)
    w = doc["windows"]["incident"]
    w["start"], w["end"] = w["start"] + shift, w["end"] + shift
    save_manifest(folder, doc)
    refused(folder, "windows.incident: start 1e+13 lies outside the years 1-9999")
    res = subprocess.run(
        [sys.executable, "-c", "from infersight.cli import main; main()", "diagnose", str(folder)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert res.returncode == 3 and "Traceback" not in res.stderr, res.stderr
    assert res.stderr.count("\n") == 1 and "lies outside the years 1-9999" in res.stderr
    with pytest.raises(BundleError, match="lies outside the years 1-9999"):
        write_bundle(folder.with_name("again"), {"incident": make_frame(start=1e13)}, {"kind": "t"})
