"""The series of a Prometheus HTTP API answer: `data` of query / query_range parsed into
labelled sample arrays, and the chunks of one long range query stitched back together."""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from infersight.sources.errors import MalformedResponse

FloatArray = npt.NDArray[np.float64]


class Series(NamedTuple):
    """One returned series: its labels (with `__name__` when the server kept it) and samples."""

    labels: dict[str, str]
    ts: FloatArray
    values: FloatArray


def _floats(raw: list[Any]) -> tuple[FloatArray, FloatArray]:
    """[[ts, "value"], ...] → (ts, values); "NaN", "+Inf", "-Inf" parse as floats."""
    if not raw:
        return np.empty(0), np.empty(0)
    try:
        ts = np.fromiter((p[0] for p in raw), dtype=np.float64, count=len(raw))
        vals = np.array([p[1] for p in raw], dtype=np.float64)
    except (TypeError, ValueError, IndexError, KeyError) as exc:
        raise MalformedResponse(f"unexpected sample in response: {exc}") from None
    return ts, vals


def parse_result(data: Any) -> list[Series]:
    """The `data` of a query / query_range answer as series (a scalar is one unlabelled series)."""
    if not isinstance(data, dict) or "resultType" not in data or "result" not in data:
        raise MalformedResponse("response `data` lacks resultType/result")
    kind, result = data["resultType"], data["result"]
    if kind in ("scalar", "string"):
        if not isinstance(result, list) or len(result) != 2:
            raise MalformedResponse(f"unexpected {kind} result")
        ts, vals = _floats([result]) if kind == "scalar" else (np.empty(0), np.empty(0))
        return [Series({}, ts, vals)]
    if kind not in ("matrix", "vector") or not isinstance(result, list):
        raise MalformedResponse(f"unexpected resultType {kind!r}")
    out = []
    for item in result:
        if not isinstance(item, dict) or not isinstance(item.get("metric"), dict):
            raise MalformedResponse("result item without `metric` labels")
        samples = item.get("values", []) if kind == "matrix" else [item.get("value")]
        if not isinstance(samples, list) or (kind == "vector" and samples == [None]):
            raise MalformedResponse(f"{kind} item without samples")
        ts, vals = _floats(samples)
        out.append(Series({str(k): str(v) for k, v in item["metric"].items()}, ts, vals))
    return out


def stitch(chunks: list[list[Series]]) -> list[Series]:
    """Chunks of one range query, in time order → one series per label set, no repeated ts."""
    parts: dict[tuple[tuple[str, str], ...], list[Series]] = {}
    for chunk in chunks:
        for s in chunk:
            parts.setdefault(tuple(sorted(s.labels.items())), []).append(s)
    out = []
    for pieces in parts.values():
        ts = np.concatenate([p.ts for p in pieces])
        vals = np.concatenate([p.values for p in pieces])
        keep = np.ones(len(ts), dtype=bool)
        keep[1:] = ts[1:] > ts[:-1]  # drop a boundary point served twice
        out.append(Series(pieces[0].labels, ts[keep], vals[keep]))
    return out


__all__ = ["Series", "parse_result", "stitch"]
