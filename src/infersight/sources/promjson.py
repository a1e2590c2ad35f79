"""Prometheus HTTP API query results (JSON, as saved from `/api/v1/query_range` or
`/api/v1/query`) imported into a RawStore.

Accepts the full response `{"status": "success", "data": {"resultType": "matrix" | "vector",
"result": [...]}}`. Values are strings ("1.5", "NaN", "+Inf", "-Inf"). Series without
`__name__` (the result of an expression) take the caller's `name`; without one they are an
error. A response with status "error" raises with the server's own error text.

    parse_promjson(data: str | bytes | Mapping, *, name=None, source="<json>") -> RawStore
    read_promjson(path, *, name=None) -> RawStore
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from infersight import userfile
from infersight.limits import Limits
from infersight.sources.jsonload import JSONDepthError, loads
from infersight.sources.raw import RawStore, labels_of
from infersight.timeparse import MAX_EPOCH, MIN_EPOCH


class PromJSONError(ValueError):
    """A query result that cannot be imported: one line naming the source and the problem."""


def _float(text: Any) -> float:
    if not isinstance(text, str):
        raise ValueError(f"value {text!r} is not a string")
    return float(text)


def _pairs(source: str, where: str, points: Any) -> tuple[list[float], list[float]]:
    if not isinstance(points, list):
        raise PromJSONError(f"{source}: {where}: expected a list of [ts, value] pairs")
    ts: list[float] = []
    vals: list[float] = []
    for k, point in enumerate(points):
        if not (isinstance(point, list) and len(point) == 2):
            raise PromJSONError(f'{source}: {where}[{k}]: expected [ts, "value"], got {point!r}')
        try:
            t = float(point[0])
            v = _float(point[1])
        except (TypeError, ValueError) as e:
            raise PromJSONError(f"{source}: {where}[{k}]: {e}") from None
        if isinstance(point[0], bool) or not math.isfinite(t):
            raise PromJSONError(f"{source}: {where}[{k}]: bad timestamp {point[0]!r}")
        if not MIN_EPOCH <= t <= MAX_EPOCH:
            ms = (
                " (it looks like milliseconds: the HTTP API gives seconds)" if t > MAX_EPOCH else ""
            )
            raise PromJSONError(
                f"{source}: {where}[{k}]: timestamp {point[0]!r} lies outside the years 1-9999{ms}"
            )
        ts.append(t)
        vals.append(v)
    return ts, vals


def parse_promjson(
    data: str | bytes | Mapping[str, Any],
    *,
    name: str | None = None,
    source: str = "<json>",
    store: RawStore | None = None,
    limits: Limits | None = None,
) -> RawStore:
    """Series of one query/query_range response; `name` names series without `__name__`."""
    if isinstance(data, str | bytes):
        depth = (limits or Limits()).json_depth
        try:
            doc: Any = loads(data, depth)
        except JSONDepthError as e:
            hint = (limits or Limits()).hint("json_depth")
            raise PromJSONError(f"{source}: JSON {e}; {hint}") from None
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            raise PromJSONError(f"{source}: not valid JSON ({e})") from None
    else:
        doc = data
    if not isinstance(doc, dict):
        raise PromJSONError(f"{source}: expected a JSON object with status and data")
    if doc.get("status") == "error":
        kind = doc.get("errorType", "error")
        raise PromJSONError(f"{source}: the server answered {kind}: {doc.get('error', '?')}")
    if doc.get("status") != "success":
        raise PromJSONError(f"{source}: status {doc.get('status')!r}; expected 'success'")
    body = doc.get("data")
    if not isinstance(body, dict) or not isinstance(body.get("result"), list):
        raise PromJSONError(f"{source}: no data.result list")
    kind = body.get("resultType")
    if kind not in ("matrix", "vector"):
        raise PromJSONError(f"{source}: resultType {kind!r}; only matrix and vector import")
    out = store if store is not None else RawStore()
    for i, series in enumerate(body["result"]):
        where = f"data.result[{i}]"
        metric = series.get("metric") if isinstance(series, dict) else None
        if not isinstance(metric, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in metric.items()
        ):
            raise PromJSONError(f"{source}: {where}.metric: expected an object of strings")
        metric_name = metric.get("__name__") or name
        if not metric_name:
            raise PromJSONError(
                f"{source}: {where} has no __name__ (an expression result); pass a metric name"
            )
        points = series.get("values") if kind == "matrix" else [series.get("value")]
        key = "values" if kind == "matrix" else "value"
        ts, vals = _pairs(source, f"{where}.{key}", points)
        out.add_many(metric_name, labels_of(metric), ts, vals)
    return out


def read_promjson(
    path: str | os.PathLike[str], *, name: str | None = None, limits: Limits | None = None
) -> RawStore:
    p = Path(path)
    try:  # a saved query_range answer: at most what the same answer over HTTP may be
        data = userfile.read_bytes(p, limit="response_bytes", limits=limits)
    except userfile.UserFileError as e:
        raise PromJSONError(str(e)) from None
    return parse_promjson(data, name=name, source=p.name, limits=limits)
