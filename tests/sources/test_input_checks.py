"""Bad input to the sources and the commands that use them: one line each, never a traceback,
and the error named for what it is (milliseconds, NaN, a bad URL, the queries that failed)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from infersight.sources.exposition import ExpositionError, parse_exposition
from infersight.sources.promjson import PromJSONError, parse_promjson
from servers import FakeServer, Reply, Request, ok

T0 = 1_764_000_000


def _cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    import os

    r = subprocess.run(
        [sys.executable, "-c", "from infersight.cli import main; main()", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **(env or {})},
    )
    assert "Traceback" not in r.stderr, r.stderr
    assert r.stderr.strip().count("\n") == 0, r.stderr
    return r


def test_millisecond_openmetrics_timestamps_are_refused_with_a_hint() -> None:
    text = f"# TYPE g gauge\ng 1 {T0 * 1000}\n# EOF\n"
    with pytest.raises(ExpositionError, match="looks like milliseconds; divide by 1000"):
        parse_exposition(text)


def test_text_format_timestamps_past_year_9999_are_refused() -> None:
    with pytest.raises(ExpositionError, match="microseconds or nanoseconds"):
        parse_exposition(f"g 1 {T0 * 10**6}\n")


def test_millisecond_query_range_timestamps_are_refused() -> None:
    doc = {
        "status": "success",
        "data": {"resultType": "matrix", "result": [{"metric": {"__name__": "g"}, "values": [
            [T0 * 1000, "1"]]}]},
    }  # fmt: skip
    with pytest.raises(PromJSONError, match="looks like milliseconds"):
        parse_promjson(json.dumps(doc))


def test_deep_query_range_json_is_one_line() -> None:
    with pytest.raises(PromJSONError, match=r"nested .* over the limit of 64"):
        parse_promjson("[" * 100_000 + "]" * 100_000)


def _om(path: Path, value: str, step_s: int = 15, points: int = 20) -> Path:
    lines = ["# TYPE vllm:num_requests_waiting gauge"]
    lines += [
        f'vllm:num_requests_waiting{{instance="a:1"}} {value} {T0 + step_s * k}'
        for k in range(points)
    ]
    path.write_text("\n".join([*lines, "# EOF", ""]))
    return path


@pytest.mark.slow
def test_an_all_nan_import_says_the_values_are_nan(tmp_path: Path) -> None:
    r = _cli("bundle", "import", str(_om(tmp_path / "a.om", "NaN")), "-o", str(tmp_path / "b"))
    assert r.returncode == 3 and "every value in the files is NaN" in r.stderr
    assert "exporter" not in r.stderr


def _query_range(*series: tuple[str, str]) -> dict[str, object]:
    """A query_range answer: per (metric name, value) one series of 40 points."""
    return {
        "status": "success",
        "data": {
            "resultType": "matrix",
            "result": [
                {
                    "metric": {"__name__": name, "instance": "node-0:8000", "model_name": "m"},
                    "values": [[T0 + 15 * i, value] for i in range(40)],
                }
                for name, value in series
            ],
        },
    }


@pytest.mark.slow
def test_an_exporters_all_nan_query_range_is_not_blamed_on_unknown_exporters(
    tmp_path: Path,
) -> None:
    """Issue 38: vLLM's queue all NaN beside a metric no exporter family knows (a recording
    rule, `up` of something else) was "none of the metric names belongs to a known exporter"."""
    doc = _query_range(("vllm:num_requests_waiting", "NaN"), ("job:requests:rate5m", "1"))
    answer = tmp_path / "q.json"
    answer.write_text(json.dumps(doc))
    r = _cli("bundle", "import", str(answer), "-o", str(tmp_path / "b"))
    assert r.returncode == 3, r.stderr
    assert "every sample of vllm:num_requests_waiting is NaN" in r.stderr, r.stderr
    assert "known exporter" not in r.stderr


def test_an_all_nan_source_says_so_when_nothing_can_be_judged() -> None:
    """The same reason carried to `cannot judge` when the frame holds no series at all."""
    from infersight.coverage import assess
    from infersight.exporters import load_catalog
    from infersight.sources.local import canonical_frame
    from infersight.sources.promjson import parse_promjson
    from infersight.sources.raw import RawStore

    store = RawStore()
    doc = _query_range(("vllm:num_requests_waiting", "NaN"), ("vllm:num_requests_running", "NaN"))
    for s in parse_promjson(json.dumps(doc).encode()):
        store.add_many(s.name, s.labels, s.ts, s.values)
    res = canonical_frame(store, load_catalog(), T0, T0 + 15 * 39, 15.0)
    assert res.missing["service.queue_length"] == (
        "every sample of vllm:num_requests_waiting is NaN"
    )
    reason = assess({"incident": res.frame}, res.missing).reason
    assert reason.startswith("every sample of the known exporters' metrics is NaN"), reason
    assert "known exporter," not in reason


@pytest.mark.slow
def test_an_import_past_the_grid_limit_is_one_line(tmp_path: Path) -> None:
    om = _om(tmp_path / "a.om", "1", step_s=86_400, points=5)  # 4 days at a 15 s step
    r = _cli(
        "bundle", "import", str(om), "-o", str(tmp_path / "b"), "--raise-limit", "grid_points=1000"
    )
    assert r.returncode == 3 and "over the 1,000 limit" in r.stderr
    assert not (tmp_path / "b").exists()


@pytest.mark.slow
@pytest.mark.parametrize("url", ["http://[::1", "http://127.0.0.1:99999", "http://:9090"])
def test_a_bad_url_is_one_line(url: str) -> None:
    r = _cli("probe", "-p", url)
    assert r.returncode == 2 and "--prometheus" in r.stderr


@pytest.mark.slow
def test_a_ca_file_that_is_not_a_certificate_is_one_line(tmp_path: Path) -> None:
    ca = tmp_path / "ca.pem"
    ca.write_text("not a certificate\n")
    r = _cli("probe", "-p", "https://127.0.0.1:1", "--ca-file", str(ca))
    assert r.returncode == 2 and "not a readable PEM certificate" in r.stderr


@pytest.mark.slow
def test_pull_reports_the_real_error_when_every_query_fails(tmp_path: Path) -> None:
    def broken(req: Request) -> Reply:
        if req.path.endswith("/values"):
            return ok(["vllm:num_requests_waiting"])
        return 422, {"status": "error", "errorType": "execution", "error": "query timed out in x"}

    with FakeServer(broken) as fake:
        r = _cli("pull", "-p", fake.url, "-o", str(tmp_path / "b"), "--baselines", "none")
    assert r.returncode == 3  # a server error
    assert "query timed out in x" in r.stderr and "--at/--window" not in r.stderr
