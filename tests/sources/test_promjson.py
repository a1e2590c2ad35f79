"""Prometheus query/query_range JSON imported into a RawStore."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from infersight.sources.promjson import PromJSONError, parse_promjson, read_promjson

MATRIX: dict[str, Any] = {
    "status": "success",
    "data": {
        "resultType": "matrix",
        "result": [
            {
                "metric": {"__name__": "vllm:num_requests_waiting", "instance": "node-7:8000"},
                "values": [[1700000000, "3"], [1700000015.5, "NaN"], [1700000030, "+Inf"]],
            },
            {
                "metric": {"__name__": "vllm:num_requests_waiting", "instance": "node-8:8000"},
                "values": [[1700000000, "-Inf"]],
            },
        ],
    },
}


def test_matrix(tmp_path: Path) -> None:
    path = tmp_path / "q.json"
    path.write_text(json.dumps(MATRIX))
    store = read_promjson(path)
    by_inst = {s.label_map["instance"]: s for s in store.series("vllm:num_requests_waiting")}
    a = by_inst["node-7:8000"]
    assert a.ts.tolist() == [1700000000.0, 1700000015.5, 1700000030.0]
    assert a.values[0] == 3.0 and math.isnan(a.values[1]) and a.values[2] == math.inf
    assert by_inst["node-8:8000"].values.tolist() == [-math.inf]
    assert "__name__" not in a.label_map


def test_vector_and_expression_name() -> None:
    doc = {
        "status": "success",
        "data": {"resultType": "vector", "result": [{"metric": {"job": "x"}, "value": [5, "1.5"]}]},
    }
    with pytest.raises(PromJSONError, match=r"data.result\[0\] has no __name__"):
        parse_promjson(doc)
    (s,) = parse_promjson(json.dumps(doc), name="ratio")
    assert (s.name, s.labels, s.ts.tolist(), s.values.tolist()) == (
        "ratio",
        (("job", "x"),),
        [5.0],
        [1.5],
    )


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        (
            {"status": "error", "errorType": "bad_data", "error": "parse error at char 5"},
            "the server answered bad_data: parse error at char 5",
        ),
        ("{nope", "not valid JSON"),
        ({"status": "success", "data": {"resultType": "scalar", "result": []}}, "scalar"),
        ({"status": "success", "data": {}}, "no data.result"),
        ({"status": "success", "data": {"resultType": "matrix", "result": [{"metric": {}}]}},
         "no __name__"),
        (
            {"status": "success", "data": {"resultType": "matrix", "result": [
                {"metric": {"__name__": "a"}, "values": [[1, 2]]}]}},
            r"values\[0\]: value 2 is not a string",
        ),
        (
            {"status": "success", "data": {"resultType": "matrix", "result": [
                {"metric": {"__name__": "a"}, "values": [[1, "x"]]}]}},
            r"values\[0\]: could not convert",
        ),
        ([1, 2], "expected a JSON object"),
    ],
)  # fmt: skip
def test_errors(doc: Any, message: str) -> None:
    data = doc if isinstance(doc, str) else json.dumps(doc)
    with pytest.raises(PromJSONError, match=message) as info:
        parse_promjson(data, source="q.json")
    assert str(info.value).startswith("q.json: ")
