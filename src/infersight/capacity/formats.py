"""Readers for the load-test tools' CSV files, told apart by their header.

- plain: `batch|concurrency|rate,throughput,p50_ms,p90_ms,p95_ms,p99_ms[,requests,errors]`
  (what `capacity sweep` writes; latency columns optional).
- Triton perf_analyzer `-f out.csv`: `Concurrency` or `Request Rate`, `Inferences/Second`,
  `p50 latency` … `p99 latency` in microseconds.
- Triton Model Analyzer's inference metrics table: `Batch`, `Concurrency`, `Model Config Path`,
  `Throughput (infer/sec)`, `p99 Latency (ms)`.
- Locust `--csv` history (`*_stats_history.csv`): `User Count`, `Requests/s`, `50%` … `99%` in
  milliseconds, one row every second or so; the rows of each user count are one step.
- vLLM `bench serve` results flattened to CSV (e.g. `vllm bench sweep`'s summary):
  `max_concurrency` or `request_rate`, `request_throughput`, `median_e2el_ms`, `p99_e2el_ms`.

Steps repeated in a file (two runs at the same batch size) are merged: throughput and latencies
are their medians, so one noisy repeat does not move the curve.
"""

from __future__ import annotations

import csv
import io
import math
import statistics
from collections.abc import Callable, Sequence
from pathlib import Path

from infersight import userfile
from infersight.capacity.results import AXES, PERCENTILES, Axis, Point, ResultsError, Sweep

Row = dict[str, str]


def _num(row: Row, col: str, where: str, required: bool = True) -> float | None:
    raw = (row.get(col) or "").strip()
    if raw in ("", "N/A", "nan", "NaN", "-"):
        if required:
            raise ResultsError(f"{where}: column {col!r} is empty")
        return None
    try:
        v = float(raw.replace(",", ""))
    except ValueError:
        raise ResultsError(f"{where}: column {col!r} holds {raw!r}, not a number") from None
    if not math.isfinite(v) or v < 0:
        raise ResultsError(f"{where}: column {col!r} holds {raw!r}; expected a number ≥ 0")
    return v


def merge_points(raw: Sequence[Point]) -> tuple[Point, ...]:
    """One point per x, repeats merged by their medians."""
    by_x: dict[float, list[Point]] = {}
    for p in raw:
        by_x.setdefault(p.x, []).append(p)
    out = []
    for x in sorted(by_x):
        ps = by_x[x]
        lat: dict[str, float | None] = {}
        for name in PERCENTILES:
            vals = [v for p in ps if (v := p.p(name)) is not None]
            lat[name] = statistics.median(vals) if vals else None
        reqs = [p.requests for p in ps if p.requests is not None]
        errs = [p.errors for p in ps if p.errors is not None]
        out.append(
            Point(
                x,
                statistics.median(p.throughput for p in ps),
                lat,
                sum(reqs) if reqs else None,
                sum(errs) if errs else None,
            )
        )
    return tuple(out)


def _points(
    rows: Sequence[Row], name: str, xcol: str, ycol: str, lat: dict[str, str], scale: float
) -> list[Point]:
    pts = []
    for i, row in enumerate(rows, start=2):
        where = f"{name} line {i}"
        x, y = _num(row, xcol, where), _num(row, ycol, where)
        assert x is not None and y is not None
        ls = {}
        for p, col in lat.items():
            v = _num(row, col, where, required=False)
            ls[p] = None if v is None else v * scale
        pts.append(Point(x, y, ls))
    return pts


def read_plain(rows: Sequence[Row], header: Sequence[str], name: str) -> Sweep:
    axis = header[0].strip().lower()
    if axis not in AXES:
        raise ResultsError(f"{name}: first column {header[0]!r}: use batch, concurrency or rate")
    lat = {p: f"{p}_ms" for p in PERCENTILES if f"{p}_ms" in header}
    pts = _points(rows, name, header[0], "throughput", lat, 1e-3)
    counted = []
    for p, row in zip(pts, rows, strict=True):
        reqs = _num(row, "requests", name, required=False) if "requests" in header else None
        errs = _num(row, "errors", name, required=False) if "errors" in header else None
        counted.append(
            Point(
                p.x,
                p.throughput,
                p.latency,
                None if reqs is None else int(reqs),
                None if errs is None else int(errs),
            )
        )
    return Sweep(axis, merge_points(counted), "plain")


def read_perf_analyzer(rows: Sequence[Row], header: Sequence[str], name: str) -> Sweep:
    xcol = "Concurrency" if "Concurrency" in header else "Request Rate"
    if xcol not in header:
        raise ResultsError(f"{name}: perf_analyzer CSV without Concurrency or Request Rate")
    lat = {p: f"{p} latency" for p in PERCENTILES if f"{p} latency" in header}
    pts = _points(rows, name, xcol, "Inferences/Second", lat, 1e-6)
    axis: Axis = "concurrency" if xcol == "Concurrency" else "rate"
    return Sweep(axis, merge_points(pts), "perf_analyzer", "infer/s")


def read_model_analyzer(
    rows: Sequence[Row], header: Sequence[str], name: str, config: str | None = None
) -> Sweep:
    cfgcol = "Model Config Path"
    notes: tuple[str, ...] = ()
    if cfgcol in header:
        configs = list(dict.fromkeys(r.get(cfgcol, "") for r in rows))
        if config is not None:
            if config not in configs:
                raise ResultsError(f"{name}: no config {config!r}; it has {', '.join(configs)}")
            rows = [r for r in rows if r.get(cfgcol) == config]
        elif len(configs) > 1:
            raise ResultsError(
                f"{name}: {len(configs)} model configs ({', '.join(configs)}); "
                "choose one with --config"
            )
        notes = (f"model config {configs[0] if config is None else config}",)
    batches = {r.get("Batch") for r in rows}
    concs = {r.get("Concurrency") for r in rows}
    if len(batches) > 1 and len(concs) > 1:
        raise ResultsError(
            f"{name}: both Batch and Concurrency vary; keep the rows of one batch size "
            "or one concurrency"
        )
    axis: Axis = "batch" if len(batches) > 1 else "concurrency"
    xcol = "Batch" if axis == "batch" else "Concurrency"
    lat = {
        p: col
        for p in PERCENTILES
        if (col := f"{p} Latency (ms)") in header or (col := f"{p.upper()} Latency (ms)") in header
    }
    pts = _points(rows, name, xcol, "Throughput (infer/sec)", lat, 1e-3)
    return Sweep(axis, merge_points(pts), "model_analyzer", "infer/s", notes)


def read_locust_history(rows: Sequence[Row], header: Sequence[str], name: str) -> Sweep:
    agg = [r for r in rows if r.get("Name", "") == "Aggregated"] or list(rows)
    steps: dict[float, list[Row]] = {}
    for r in agg:
        users = _num(r, "User Count", name)
        assert users is not None
        if users > 0:
            steps.setdefault(users, []).append(r)
    cols = {"p50": "50%", "p90": "90%", "p95": "95%", "p99": "99%"}
    pts = []
    for users, rs in steps.items():
        # the first second of a step is the ramp to it; its rate belongs to neither step
        body = rs[1:] if len(rs) > 2 else rs
        rates = [v for r in body if (v := _num(r, "Requests/s", name, False)) is not None]
        if not rates:
            continue
        lat: dict[str, float | None] = {}
        for p, col in cols.items():
            vals = [v for r in body if (v := _num(r, col, name, False)) is not None]
            lat[p] = statistics.median(vals) / 1000.0 if vals and col in header else None
        pts.append(Point(users, statistics.median(rates), lat))
    if not pts:
        raise ResultsError(f"{name}: no Locust rows with users and a request rate")
    return Sweep("concurrency", merge_points(pts), "locust", "req/s")


def read_vllm(rows: Sequence[Row], header: Sequence[str], name: str) -> Sweep:
    xcol = "max_concurrency" if "max_concurrency" in header else "request_rate"
    if xcol not in header:
        raise ResultsError(f"{name}: vLLM results without max_concurrency or request_rate")
    usable = [r for r in rows if (r.get(xcol) or "").strip() not in ("", "inf", "None")]
    if not usable:
        raise ResultsError(f"{name}: every row's {xcol} is empty or inf: no steps to compare")
    lat = {}
    for p in PERCENTILES:
        col = "median_e2el_ms" if p == "p50" and "median_e2el_ms" in header else f"{p}_e2el_ms"
        if col in header:
            lat[p] = col
    pts = _points(usable, name, xcol, "request_throughput", lat, 1e-3)
    axis: Axis = "concurrency" if xcol == "max_concurrency" else "rate"
    return Sweep(axis, merge_points(pts), "vllm", "req/s")


def detect(header: Sequence[str]) -> str | None:
    """The format a header belongs to, or None."""
    cols = set(header)
    if header and header[0].strip().lower() in AXES and "throughput" in cols:
        return "plain"
    if "Inferences/Second" in cols:
        return "perf_analyzer"
    if "Throughput (infer/sec)" in cols:
        return "model_analyzer"
    if "User Count" in cols and "Requests/s" in cols:
        return "locust"
    if "Request Count" in cols and "Requests/s" in cols:
        return "locust_stats"
    if "request_throughput" in cols:
        return "vllm"
    return None


FORMATS = ("plain", "perf_analyzer", "model_analyzer", "locust", "vllm")


def read_results(path: Path, fmt: str | None = None, config: str | None = None) -> Sweep:
    """A results file as a sweep; `fmt` forces a format (default: told by the header)."""
    try:
        text = userfile.read_text(path, encoding="utf-8-sig")
    except userfile.UserFileError as exc:
        raise ResultsError(str(exc)) from None
    return parse_results(text, str(path), fmt, config)


def parse_results(text: str, name: str, fmt: str | None = None, config: str | None = None) -> Sweep:
    reader = csv.DictReader(io.StringIO(text))
    header = [h.strip() for h in (reader.fieldnames or [])]
    reader.fieldnames = header
    rows = [r for r in reader if any((v or "").strip() for v in r.values() if isinstance(v, str))]
    found = fmt or detect(header)
    if found == "locust_stats":
        raise ResultsError(
            f"{name}: a Locust stats CSV holds one load level; give its _stats_history.csv "
            "from a run that steps the users"
        )
    if found is None:
        raise ResultsError(
            f"{name}: header {', '.join(header[:6]) or '(empty)'} is none of the formats "
            f"({', '.join(FORMATS)}); see docs/capacity.md"
        )
    if not rows:
        raise ResultsError(f"{name}: a header and no rows")
    readers: dict[str, Callable[[Sequence[Row], Sequence[str], str], Sweep]] = {
        "plain": read_plain,
        "perf_analyzer": read_perf_analyzer,
        "locust": read_locust_history,
        "vllm": read_vllm,
    }
    if found == "model_analyzer":
        sweep = read_model_analyzer(rows, header, name, config)
    elif found in readers:
        sweep = readers[found](rows, header, name)
    else:
        raise ResultsError(f"--format {found!r}: choose one of {', '.join(FORMATS)}")
    if len(sweep.points) < 3:
        raise ResultsError(
            f"{name}: {len(sweep.points)} step(s); a knee needs at least 3 (sweep further)"
        )
    return sweep
