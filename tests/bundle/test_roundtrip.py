"""Bundles written and read back: tar.gz and directory, windows, artifacts, missing, summary."""

from __future__ import annotations

import json
import tarfile
from pathlib import Path

import numpy as np
import pytest
from bundle_helpers import SIGNALS, assert_frames_equal, make_frame

from infersight.bundle import BundleError, read_bundle, summarize, write_bundle
from infersight.bundle.write import NO_SAMPLES
from infersight.frame import MetricFrame

ARTIFACTS = {"stacks/engine.txt": b"Thread 1 (idle)\n", "nvidia-smi.txt": b"\x00\xffbinary ok"}
SOURCE = {"kind": "simulator", "scenario": "02:17 incident"}


@pytest.mark.parametrize("name", ["b.tar.gz", "b.tgz", "b-dir"])
def test_round_trip(tmp_path: Path, name: str) -> None:
    incident = make_frame()
    baseline = make_frame(start=incident.start - 86_400, seed=1)
    missing = {"dependency.vector_query_p99": "no milvus exporter found"}
    path = write_bundle(
        tmp_path / name,
        {"incident": incident, "baseline-1d": baseline},
        SOURCE,
        missing=missing,
        artifacts=ARTIFACTS,
        notes="queue up, GPU idle",
    )
    assert path == tmp_path / name
    assert (path.is_dir()) == (name == "b-dir")
    bundle = read_bundle(path)
    assert_frames_equal(bundle.frame, incident)
    assert_frames_equal(bundle.windows["baseline-1d"], baseline)
    assert bundle.missing == missing
    assert bundle.artifact_names() == sorted(ARTIFACTS)
    for art, data in ARTIFACTS.items():
        assert bundle.read_artifact(art) == data
    m = bundle.manifest
    assert m.schema_version == 2 and m.source == SOURCE and m.notes == "queue up, GPU idle"
    assert m.signals == sorted(SIGNALS)
    assert m.instances == sorted(incident.instances)
    assert m.windows["incident"].step == 15.0 and m.windows["incident"].end == incident.end
    assert m.created_at.utcoffset() is not None
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]  # no temp files left


def test_manifest_is_first_tar_member_and_plain_json(tmp_path: Path, frame: MetricFrame) -> None:
    path = write_bundle(tmp_path / "b.tar.gz", {"incident": frame}, SOURCE)
    with tarfile.open(path) as tar:
        names = tar.getnames()
        manifest = tar.extractfile("manifest.json")
        assert manifest is not None
        doc = json.loads(manifest.read())
    assert names == ["manifest.json", "metrics/incident.parquet"]
    assert doc["created_at"].endswith("Z")
    assert set(doc["members"]) == {"metrics/incident.parquet"}


def test_signal_without_any_value_is_reported_missing(tmp_path: Path, frame: MetricFrame) -> None:
    empty = frame.with_series("infra.gpu_sm_clock_mhz", ["node-0"], np.full((1, frame.n), np.nan))
    bundle = read_bundle(write_bundle(tmp_path / "b", {"incident": empty}, SOURCE))
    assert bundle.missing == {"infra.gpu_sm_clock_mhz": NO_SAMPLES}
    assert "infra.gpu_sm_clock_mhz" not in bundle.frame
    assert "infra.gpu_sm_clock_mhz" not in bundle.manifest.signals


def test_all_nan_instance_row_is_not_stored(tmp_path: Path) -> None:
    values = np.array([[1.0, 2.0], [np.nan, np.nan]])
    f = MetricFrame(0.0, 10.0, 2).with_series("service.queue_length", ["a", "b"], values)
    bundle = read_bundle(write_bundle(tmp_path / "b.tgz", {"incident": f}, SOURCE))
    assert bundle.frame.series["service.queue_length"].instances == ("a",)
    assert bundle.manifest.instances == ["a"]


def test_tarball_packed_by_hand_with_dot_prefix_reads(tmp_path: Path, frame: MetricFrame) -> None:
    folder = write_bundle(tmp_path / "b", {"incident": frame}, SOURCE, artifacts=ARTIFACTS)
    packed = tmp_path / "packed.tar.gz"
    with tarfile.open(packed, "w:gz") as tar:
        tar.add(folder, arcname=".")
    bundle = read_bundle(packed)
    assert_frames_equal(bundle.frame, frame)
    assert bundle.artifact_names() == sorted(ARTIFACTS)


def test_summary(tmp_path: Path, frame: MetricFrame) -> None:
    path = write_bundle(
        tmp_path / "b.tar.gz",
        {"incident": frame},
        SOURCE,
        missing={"dependency.cache_hit_ratio": "redis_exporter not scraped"},
        artifacts=ARTIFACTS,
    )
    s = summarize(read_bundle(path))
    d = s.to_dict()
    assert d["file_size"] == path.stat().st_size > 0
    assert d["signal_count"] == 3 and d["instance_count"] == 4
    assert d["signals_per_layer"] == {
        "access": 0,
        "service": 1,
        "inference": 1,
        "dependency": 0,
        "infrastructure": 1,
    }
    assert d["missing"] == {"dependency.cache_hit_ratio": "redis_exporter not scraped"}
    assert d["artifacts"] == {k: len(v) for k, v in sorted(ARTIFACTS.items())}
    (w,) = d["windows"]
    assert w["name"] == "incident" and w["grid_points"] == frame.n
    assert w["points"] == frame.points()
    assert (w["start"], w["end"], w["step"]) == (frame.start, frame.end, 15.0)
    assert d["source"] == SOURCE


def test_unknown_artifact_is_a_bundle_error(tmp_path: Path, frame: MetricFrame) -> None:
    bundle = read_bundle(write_bundle(tmp_path / "b", {"incident": frame}, SOURCE))
    with pytest.raises(BundleError, match=r"no artifact .x\.txt."):
        bundle.read_artifact("x.txt")


@pytest.mark.parametrize("shuffled", [False, True])
def test_rows_in_any_order_read_the_same(frame: MetricFrame, shuffled: bool) -> None:
    """The writer keeps a signal's rows together and the reader takes them as slices; a file
    written by another tool, its rows in any order, reads to the same frame."""
    import io

    import pyarrow as pa
    import pyarrow.parquet as pq

    from infersight.bundle.table import frame_to_parquet, parquet_to_frame

    table = pq.read_table(pa.BufferReader(frame_to_parquet(frame)))
    if shuffled:
        order = np.random.default_rng(0).permutation(table.num_rows)
        table = table.take(pa.array(order))
    buf = io.BytesIO()
    pq.write_table(table, buf)
    back = parquet_to_frame(buf.getvalue(), frame.start, frame.step, frame.n)
    assert set(back.signals) == set(frame.signals)
    for name, s in frame.series.items():
        got = back.series[name]
        assert set(got.instances) == set(s.instances), name
        for k, inst in enumerate(s.instances):
            row = got.values[got.instances.index(inst)]
            np.testing.assert_array_equal(row, s.values[k])
