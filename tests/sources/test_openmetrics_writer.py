"""OpenMetrics writer: round trip through our parser, and real promtool backfill."""

from __future__ import annotations

import io
import math
import shutil
import subprocess
from pathlib import Path

import pytest

from infersight.sources.exposition import parse_exposition
from infersight.sources.openmetrics_writer import write_openmetrics
from infersight.sources.raw import RawStore
from servers import require

START = 1_700_000_000.0
STEP = 15.0
POINTS = 2 * 3600 // 15  # two hours at 15 s
TYPES = {"gpu_temp": "gauge", "requests": "counter", "latency_seconds": "histogram"}


def sample_store() -> RawStore:
    store = RawStore()
    ts = [START + k * STEP for k in range(POINTS)]
    for inst in ("node-1:8000", "node-2:8000"):
        labels = (("instance", inst), ("job", "engine"))
        store.add_many("gpu_temp", labels, ts, [60.0 + (k % 30) for k in range(POINTS)])
        store.add_many("requests_total", labels, ts, [float(10 * k) for k in range(POINTS)])
        for le, share in (("0.1", 0.5), ("1.0", 0.9), ("+Inf", 1.0)):
            bucket = (*labels[:1], ("job", "engine"), ("le", le))
            store.add_many("latency_seconds_bucket", tuple(sorted(bucket)), ts,
                           [math.floor(10 * k * share) for k in range(POINTS)])  # fmt: skip
        store.add_many("latency_seconds_count", labels, ts, [float(10 * k) for k in range(POINTS)])
        store.add_many("latency_seconds_sum", labels, ts, [k * 0.4 for k in range(POINTS)])
    store.add("odd", (("msg", 'quote " back \\ nl \n'),), START, math.nan)
    return store


def written(store: RawStore) -> str:
    out = io.StringIO()
    write_openmetrics(store, out, TYPES)
    return out.getvalue()


def test_layout() -> None:
    text = written(sample_store())
    lines = text.splitlines()
    assert lines[-1] == "# EOF"
    types = [ln for ln in lines if ln.startswith("# TYPE")]
    assert types == [
        "# TYPE gpu_temp gauge",
        "# TYPE latency_seconds histogram",
        "# TYPE odd unknown",
        "# TYPE requests counter",
    ]
    # each family's samples are contiguous, right after its TYPE line
    current = ""
    for ln in lines[:-1]:
        if ln.startswith("# TYPE"):
            current = ln.split()[2]
        else:
            assert current and ln.startswith(current), ln
    assert any(ln.startswith("requests_total{") for ln in lines)


def test_round_trip_through_our_parser() -> None:
    store = sample_store()
    back = parse_exposition(written(store))
    assert len(back) == len(store)
    for s in store:
        (b,) = [x for x in back.series(s.name) if x.labels == s.labels]
        assert b.ts.tolist() == s.ts.tolist()
        assert [v if not math.isnan(v) else "nan" for v in b.values.tolist()] == [
            v if not math.isnan(v) else "nan" for v in s.values.tolist()
        ]


def test_type_clash_is_an_error() -> None:
    store = RawStore()
    store.add("h_bucket", (("le", "+Inf"),), 0.0, 1.0)
    store.add("h", (), 0.0, 1.0)
    with pytest.raises(ValueError, match="two types: h"):
        write_openmetrics(store, io.StringIO(), {"h": "histogram"})


def test_path_is_written_whole(tmp_path: Path) -> None:
    path = tmp_path / "data.om"
    assert write_openmetrics(sample_store(), path, TYPES) == 2 * POINTS * 7 + 1
    assert path.read_text().endswith("# EOF\n")
    assert [p.name for p in tmp_path.iterdir()] == ["data.om"]


def test_promtool_backfill_accepts_it(tmp_path: Path) -> None:
    require("promtool")
    promtool = shutil.which("promtool")
    assert promtool is not None
    data = tmp_path / "data.om"
    count = write_openmetrics(sample_store(), data, TYPES)
    blocks = tmp_path / "blocks"
    run = subprocess.run(
        [promtool, "tsdb", "create-blocks-from", "openmetrics", str(data), str(blocks)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    listing = subprocess.run(
        [promtool, "tsdb", "list", str(blocks)], capture_output=True, text=True, timeout=60
    )
    assert listing.returncode == 0, listing.stderr
    header, *blocks_listed = listing.stdout.splitlines()
    assert header.split()[:9] == [
        *("BLOCK", "ULID", "MIN", "TIME", "MAX", "TIME", "DURATION", "NUM", "SAMPLES")
    ]
    assert blocks_listed, listing.stdout
    # columns: ULID, min time, max time, duration, samples, ...
    assert sum(int(row.split()[4]) for row in blocks_listed) == count
