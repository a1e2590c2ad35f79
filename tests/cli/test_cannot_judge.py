"""Missing is never healthy: with nothing to read, `diagnose` and `detect` say "cannot judge"
and exit 3, never "Nothing is wrong" with exit 0.

Each case runs the real command in a subprocess against a real source: an empty Prometheus, a
small HTTP server that answers 500 or never answers, and bundles with no rows or only NaN.
"""

from __future__ import annotations

import hashlib
import io
import json
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from infersight.bundle import write_bundle
from infersight.frame import MetricFrame
from infersight.lab.live.servers import LocalPrometheus
from servers import FakeServer, Reply, Request

START = 1_700_000_000.0
N = 240
EXIT_CANNOT_JUDGE = 3
#: metric names a vLLM + DCGM fleet would list; every query for them then fails
NODES = ["n0", "n1"]
NAMES = ["vllm:num_requests_waiting", "DCGM_FI_DEV_GPU_UTIL", "node_cpu_seconds_total"]

#: the CLI in a subprocess, each against real retries and timeouts (half a minute in all)
pytestmark = pytest.mark.slow


def cli(*args: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", "from infersight.cli import main; main()", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def assert_cannot_judge(res: subprocess.CompletedProcess[str], why: str = "") -> None:
    assert res.returncode == EXIT_CANNOT_JUDGE, (res.returncode, res.stdout, res.stderr)
    assert "Traceback" not in res.stderr
    lines = [line for line in res.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("cannot judge: "), res.stderr
    assert why in lines[0]
    assert "Nothing is wrong" not in res.stdout


def assert_json_unjudged(res: subprocess.CompletedProcess[str]) -> dict[str, object]:
    doc: dict[str, object] = json.loads(res.stdout)
    assert doc["healthy"] is False and doc["judged"] is False
    return doc


# -- live sources -----------------------------------------------------------------------------


@pytest.mark.server
def test_empty_prometheus(
    prometheus_with_backfill: Callable[[Sequence[Path]], LocalPrometheus],
) -> None:
    url = prometheus_with_backfill([]).url
    res = cli("diagnose", "-p", url, "-f", "json")
    assert_cannot_judge(res, "no metric of a known exporter")
    doc = assert_json_unjudged(res)
    coverage = doc["coverage"]
    assert isinstance(coverage, list) and [c["readable"] for c in coverage] == [[]] * 5
    assert_cannot_judge(cli("diagnose", "-p", url), "no metric of a known exporter")
    assert_cannot_judge(cli("detect", "-p", url))
    assert_json_unjudged(det := cli("detect", "-p", url, "--json"))
    assert_cannot_judge(det)


def _names_then(reply: Callable[[Request], Reply]) -> Callable[[Request], Reply]:
    """A server listing vLLM/DCGM metric names, answering every query with `reply`."""

    def handler(req: Request) -> Reply:
        if req.path.endswith("/label/__name__/values"):
            return 200, {"status": "success", "data": NAMES}
        return reply(req)

    return handler


def _error(_: Request) -> Reply:
    return 500, {"status": "error", "errorType": "internal", "error": "boom"}


def test_every_query_answers_500() -> None:
    with FakeServer(_names_then(_error)) as fake:
        res = cli("diagnose", "-p", fake.url, "-f", "json", "--timeout", "2")
        assert_cannot_judge(res, "every query failed")
        assert_json_unjudged(res)
        assert_cannot_judge(cli("detect", "-p", fake.url, "--timeout", "2"), "every query failed")


def test_every_request_answers_500() -> None:
    with FakeServer(_error) as fake:
        res = cli("diagnose", "-p", fake.url, "--timeout", "2")
        assert_cannot_judge(res, "HTTP 500")


@pytest.fixture
def hung() -> Iterator[threading.Event]:
    release = threading.Event()
    yield release
    release.set()


def test_every_query_times_out(hung: threading.Event) -> None:
    def never(_: Request) -> Reply:
        hung.wait(120)
        return _error(_)

    with FakeServer(_names_then(never)) as fake:
        res = cli("diagnose", "-p", fake.url, "-f", "json", "--timeout", "1")
        assert_cannot_judge(res)
        assert_json_unjudged(res)
    with FakeServer(never) as fake:  # the very first request hangs too
        assert_cannot_judge(cli("detect", "-p", fake.url, "--timeout", "1"))


# -- bundles ----------------------------------------------------------------------------------


def _zero_rows(path: Path) -> Path:
    return write_bundle(path, {"incident": MetricFrame(START, 15.0, N)}, {"kind": "test"})


def _only_nan(path: Path) -> Path:
    """A directory bundle whose incident window holds rows, every value NaN."""
    frame = MetricFrame(START, 15.0, N).with_series("service.queue_length", ["n0"], np.ones((1, N)))
    write_bundle(path, {"incident": frame}, {"kind": "test"})
    table = pa.table(
        {
            "ts": pa.array(START + 15.0 * np.arange(N)),
            "signal": pa.DictionaryArray.from_arrays(
                pa.array(np.zeros(N, np.int32)), pa.array(["service.queue_length"])
            ),
            "instance": pa.DictionaryArray.from_arrays(
                pa.array(np.zeros(N, np.int32)), pa.array(["n0"])
            ),
            "value": pa.array(np.full(N, np.nan)),
        }
    )
    buf = io.BytesIO()
    pq.write_table(table, buf)
    manifest = json.loads((path / "manifest.json").read_text())
    member = manifest["windows"]["incident"]["file"]
    (path / member).write_bytes(buf.getvalue())
    manifest["members"][member] = hashlib.sha256(buf.getvalue()).hexdigest()
    (path / "manifest.json").write_text(json.dumps(manifest))
    return path


@pytest.mark.parametrize(
    ("make", "why"), [(_zero_rows, "no series"), (_only_nan, "only NaN")], ids=["zero", "nan"]
)
def test_bundle_with_nothing_to_read(
    tmp_path: Path, make: Callable[[Path], Path], why: str
) -> None:
    bundle = str(make(tmp_path / "b"))
    assert_cannot_judge(cli("diagnose", bundle), why)
    res = cli("diagnose", bundle, "-f", "json")
    assert_cannot_judge(res, why)
    assert_json_unjudged(res)
    assert_cannot_judge(cli("detect", bundle), why)
    out = tmp_path / "r.md"  # a report written to a file says so too, and the command still exits 3
    assert_cannot_judge(cli("diagnose", bundle, "-o", str(out)), why)
    assert "Cannot judge" in out.read_text() and "Coverage per layer" in out.read_text()


def test_partial_coverage_is_stated_next_to_the_verdict(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    queue, busy = 50 + rng.normal(0, 1, (2, 2 * N)), 0.6 + rng.normal(0, 0.01, (2, 2 * N))

    def frame(start: float, part: slice) -> MetricFrame:
        f = MetricFrame(start, 15.0, N).with_series("service.queue_length", NODES, queue[:, part])
        return f.with_series("inference.gpu_util", NODES, busy[:, part])

    # the hour before too, and GPU busy time to decide hypotheses on: without either there are
    # no grounds for a verdict (test_all_clear.py)
    windows = {"incident": frame(START, slice(N, None)), "baseline-1h": frame(START - 3600,
               slice(None, N))}  # fmt: skip
    bundle = str(write_bundle(tmp_path / "b", windows, {"kind": "test"}))
    res = cli("diagnose", bundle, "-f", "json")
    assert res.returncode in (0, 1), res.stderr
    doc = json.loads(res.stdout)
    assert doc["judged"] is True
    service = next(c for c in doc["coverage"] if c["layer"] == "service")
    assert service["readable"] == ["service.queue_length"]
    assert service["instances"] == ["n0", "n1"]
    text = cli("diagnose", bundle).stdout
    verdict = text[: text.index("Window:")]
    assert "Partial coverage: 2 of" in verdict and "no reading at all in access" in verdict
