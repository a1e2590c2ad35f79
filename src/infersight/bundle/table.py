"""One window of a bundle as Parquet: long form `ts, signal, instance, value`.

`ts` and `value` are float64; `signal` and `instance` are dictionary-encoded strings. NaN is a
gap and is not stored, so an instance whose row is all NaN is absent after a round trip.
"""

from __future__ import annotations

import io

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from infersight.frame import MetricFrame, SignalSeries

COLUMNS = ("ts", "signal", "instance", "value")
#: Largest distance from a grid point, in steps, for a point still to count as on the grid.
GRID_TOLERANCE = 1e-6


def frame_to_parquet(frame: MetricFrame) -> bytes:
    """Parquet bytes (zstd) of every non-NaN point of the frame."""
    inst_names = sorted(set(frame.instances))
    inst_code = {name: i for i, name in enumerate(inst_names)}
    sig_names = list(frame.series)
    times = frame.times
    ts_parts, val_parts, sig_parts, inst_parts = [], [], [], []
    for s_code, s in enumerate(frame.series.values()):
        ok = ~np.isnan(s.values)
        rows, cols = np.nonzero(ok)
        ts_parts.append(times[cols])
        val_parts.append(s.values[rows, cols])
        codes = np.asarray([inst_code[i] for i in s.instances], dtype=np.int32)
        inst_parts.append(codes[rows])
        sig_parts.append(np.full(rows.size, s_code, dtype=np.int32))

    def cat(parts: list[np.ndarray], dtype: type) -> np.ndarray:
        return np.concatenate(parts) if parts else np.empty(0, dtype=dtype)

    table = pa.table(
        {
            "ts": pa.array(cat(ts_parts, np.float64), pa.float64()),
            "signal": pa.DictionaryArray.from_arrays(
                cat(sig_parts, np.int32), pa.array(sig_names, pa.string())
            ),
            "instance": pa.DictionaryArray.from_arrays(
                cat(inst_parts, np.int32), pa.array(inst_names, pa.string())
            ),
            "value": pa.array(cat(val_parts, np.float64), pa.float64()),
        }
    )
    buf = io.BytesIO()
    pq.write_table(table, buf, compression="zstd")
    return buf.getvalue()


def _codes(table: pa.Table, column: str) -> tuple[np.ndarray, list[str]]:
    """Dictionary indices and values of a string column (plain or dictionary-encoded)."""
    col = table.column(column).combine_chunks()
    dictionary = pa.types.is_dictionary(col.type)
    value_type = col.type.value_type if dictionary else col.type
    if not (pa.types.is_string(value_type) or pa.types.is_large_string(value_type)):
        raise ValueError(f"column {column!r} has type {col.type}; expected strings")
    if col.null_count:
        raise ValueError(f"column {column!r} has nulls")
    if not dictionary:
        encoded = col.dictionary_encode()
        indices = np.asarray(encoded.indices.to_numpy(zero_copy_only=False), dtype=np.int64)
        return indices, [str(v) for v in encoded.dictionary.to_pylist()]
    # a hand-made dictionary may repeat values or hold unused ones: merge the repeats (the
    # dictionary is small, the column long: no decoding of the column's strings)
    names: dict[str, int] = {}
    remap = np.array(
        [
            -1 if v is None else names.setdefault(str(v), len(names))
            for v in col.dictionary.to_pylist()
        ],
        dtype=np.int64,
    )
    indices = remap[np.asarray(col.indices.to_numpy(zero_copy_only=False), dtype=np.int64)]
    if np.any(indices < 0):
        raise ValueError(f"column {column!r} has nulls")
    return indices, list(names)


def _floats(table: pa.Table, column: str) -> np.ndarray:
    col = table.column(column)
    if col.type != pa.float64():
        raise ValueError(f"column {column!r} has type {col.type}; expected double (float64)")
    if col.null_count:
        raise ValueError(f"column {column!r} has nulls")
    return np.asarray(col.to_numpy(), dtype=np.float64)


def parquet_to_frame(data: bytes, start: float, step: float, n: int) -> MetricFrame:
    """The frame of one window's Parquet bytes; ValueError naming the first problem.

    Checks column names and types, that every point lies on the grid (start, step, n) and that
    no (signal, instance, time) appears twice.
    """
    try:
        table = pq.read_table(pa.BufferReader(data))
    except (pa.ArrowException, OSError) as e:
        raise ValueError(f"not a readable Parquet file ({e})") from None
    if tuple(table.column_names) != COLUMNS:
        raise ValueError(f"columns {table.column_names}; expected {list(COLUMNS)}")
    ts, vals = _floats(table, "ts"), _floats(table, "value")
    sig_idx, sig_names = _codes(table, "signal")
    inst_idx, inst_names = _codes(table, "instance")
    pos = (ts - start) / step
    idx = np.rint(pos)
    bad = ~(np.abs(pos - idx) <= GRID_TOLERANCE) | (idx < 0) | (idx >= n)
    if np.any(bad):
        k = int(np.argmax(bad))
        raise ValueError(
            f"point at ts={ts[k]!r} is off the window's grid "
            f"(start {start}, step {step}, {n} points)"
        )
    col = idx.astype(np.int64)
    series: dict[str, SignalSeries] = {}
    if not ts.size:
        return MetricFrame(start, step, n, series)
    rows, order, counts = _rows_by_first_seen(sig_idx, inst_idx, len(sig_names), len(inst_names))
    cell = rows * n + col
    doubled = np.bincount(cell, minlength=order.size * n) > 1
    if np.any(doubled):
        k = int(np.argmax(doubled[cell]))
        raise ValueError(f"signal {sig_names[sig_idx[k]]!r} has a point twice")
    values = np.full((order.size, n), np.nan)
    values.reshape(-1)[cell] = vals
    at = 0
    for sig, count in enumerate(counts):
        if count:
            keys = order[at : at + count]
            names = tuple(inst_names[int(k) % len(inst_names)] for k in keys)
            series[sig_names[sig]] = SignalSeries(names, values[at : at + count])
            at += count
    return MetricFrame(start, step, n, series)


def _rows_by_first_seen(
    sig_idx: np.ndarray, inst_idx: np.ndarray, signals: int, instances: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each point's row in one array of every (signal, instance) present, grouped by signal and
    within a signal in the order its instances first appear; also the (signal, instance) keys
    in row order and the rows per signal. The points are not sorted: a file holds few keys,
    each in long runs."""
    key = sig_idx * instances + inst_idx
    starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])  # runs of one key
    run_keys, first_run = np.unique(key[starts], return_index=True)
    first_seen = starts[first_run]
    ranked = np.lexsort((first_seen, run_keys // instances))
    row_of = np.empty(run_keys.size, dtype=np.int64)  # by position among the sorted keys
    row_of[ranked] = np.arange(run_keys.size)
    order = run_keys[ranked]
    counts = np.bincount(order // instances, minlength=signals)
    return row_of[np.searchsorted(run_keys, key)], order, counts
