"""String columns read as codes: a hand-made dictionary that Parquet would not produce
(pyarrow's writer merges repeated names) still reads each name once, and a null name is refused."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from infersight.bundle.table import _codes


def _table(codes: list[int], names: list[str | None]) -> pa.Table:
    col = pa.DictionaryArray.from_arrays(pa.array(codes, pa.int32()), pa.array(names, pa.string()))
    return pa.table({"signal": col})


def test_repeated_dictionary_names_read_as_one() -> None:
    idx, names = _codes(_table([0, 1, 2, 3, 2], ["a", "b", "a", "c"]), "signal")
    assert names == ["a", "b", "c"]
    assert [names[i] for i in idx] == ["a", "b", "a", "c", "a"]


def test_unused_null_name_is_harmless_and_used_one_is_refused() -> None:
    idx, names = _codes(_table([0, 1], ["a", "b", None]), "signal")
    assert [names[i] for i in idx] == ["a", "b"]
    with pytest.raises(ValueError, match="column 'signal' has nulls"):
        _codes(_table([0, 2], ["a", "b", None]), "signal")


def test_plain_strings_read_the_same() -> None:
    idx, names = _codes(pa.table({"signal": pa.array(["x", "y", "x"])}), "signal")
    assert np.array_equal(idx, [0, 1, 0]) and names == ["x", "y"]


def test_points_in_any_order_read_as_the_writer_laid_them_out() -> None:
    """A hand-made file sorted by time interleaves every (signal, instance): it reads to the
    same frame, instances in the order they first appear; a point given twice is refused."""
    import io

    import pyarrow.parquet as pq

    from infersight.bundle.table import frame_to_parquet, parquet_to_frame
    from infersight.frame import MetricFrame, SignalSeries

    rng = np.random.default_rng(7)
    a = rng.normal(size=(3, 6))
    a[1, 2] = np.nan
    frame = MetricFrame(
        0.0,
        15.0,
        6,
        {
            "service.request_rate": SignalSeries(("node-b", "node-a", "node-c"), a),
            "inference.gpu_util": SignalSeries(("node-c", "node-a"), rng.random((2, 6))),
        },
    )
    table = pq.read_table(io.BytesIO(frame_to_parquet(frame)))
    shuffled = table.take(np.lexsort((rng.random(table.num_rows), table.column("ts").to_numpy())))

    def parquet(t: pa.Table) -> bytes:
        buf = io.BytesIO()
        pq.write_table(t, buf)
        return buf.getvalue()

    back = parquet_to_frame(parquet(shuffled), 0.0, 15.0, 6)
    first_seen: dict[str, list[str]] = {}
    signals, instances = (shuffled.column(c).to_pylist() for c in ("signal", "instance"))
    for sig, inst in zip(signals, instances, strict=True):
        seen = first_seen.setdefault(sig, [])
        if inst not in seen:
            seen.append(inst)
    for sig, s in frame.series.items():
        got = back.series[sig]
        assert got.instances == tuple(first_seen[sig])
        for inst in s.instances:
            assert np.array_equal(got.row(inst), s.row(inst), equal_nan=True)
    twice = pa.concat_tables([table, table.slice(5, 1)])
    with pytest.raises(ValueError, match="has a point twice"):
        parquet_to_frame(parquet(twice), 0.0, 15.0, 6)
