"""One window of a bundle as Parquet: long form `ts, signal, instance, value`.

`ts` and `value` are float64; `signal` and `instance` are dictionary-encoded strings. NaN is a
gap and is not stored, so an instance whose row is all NaN is absent after a round trip.
"""

from __future__ import annotations

import io
import itertools

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


def _by_signal(sig_idx: np.ndarray) -> list[slice] | list[np.ndarray]:
    """The rows of each signal: slices where the file keeps a signal's rows together (as
    `frame_to_parquet` writes them: no sort, no copies), else index arrays."""
    if not sig_idx.size:
        return []
    cuts = np.flatnonzero(np.diff(sig_idx)) + 1
    if np.unique(sig_idx[np.concatenate(([0], cuts))]).size == cuts.size + 1:
        edges = [0, *cuts.tolist(), sig_idx.size]
        return [slice(a, b) for a, b in itertools.pairwise(edges)]
    order = np.argsort(sig_idx, kind="stable")
    return np.split(order, np.flatnonzero(np.diff(sig_idx[order])) + 1)


#: bytes one row may take decoded (ts 8, value 8, two dictionary indices, slack for strings)
ROW_BYTES = 64


def parquet_to_frame(
    data: bytes, start: float, step: float, n: int, max_values: int | None = None
) -> MetricFrame:
    """The frame of one window's Parquet bytes; ValueError naming the first problem.

    Checks column names and types, that every point lies on the grid (start, step, n) and that
    no (signal, instance, time) appears twice. With `max_values`, refuses a file whose rows or
    decoded size, or a grid whose arrays, would exceed that many values, before decoding it.
    """
    try:
        if max_values is not None:
            meta = pq.ParquetFile(pa.BufferReader(data)).metadata
            decoded = sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups))
            if meta.num_rows > max_values or decoded > max_values * ROW_BYTES:
                raise ValueError(
                    f"holds {meta.num_rows:,} rows ({decoded:,} bytes decoded), over the "
                    f"{max_values:,}-value limit (grid_values)"
                )
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
    allocated = 0
    for group in _by_signal(sig_idx):
        s_inst = inst_idx[group]
        uniq, first = np.unique(s_inst, return_index=True)
        uniq = uniq[np.argsort(first)]
        row_of = np.empty(len(inst_names), dtype=np.int64)
        row_of[uniq] = np.arange(uniq.size)
        rows = row_of[s_inst]
        allocated += uniq.size * n
        if max_values is not None and allocated > max_values:
            raise ValueError(f"the grid would hold over {max_values:,} values (grid_values)")
        arr = np.full((uniq.size, n), np.nan)
        flat = rows * n + col[group]
        if np.bincount(flat, minlength=arr.size).max(initial=0) > 1:
            raise ValueError(f"signal {sig_names[sig_idx[group][0]]!r} has a point twice")
        arr.reshape(-1)[flat] = vals[group]
        series[sig_names[sig_idx[group][0]]] = SignalSeries(tuple(inst_names[i] for i in uniq), arr)
    return MetricFrame(start, step, n, series)
