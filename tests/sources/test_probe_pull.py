"""probe + pull against real Prometheus and VictoriaMetrics (backfilled and scraping), and
pull's failure handling against a scripted fake."""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from numpy.testing import assert_allclose

from infersight.exporters import Catalog, load_catalog
from infersight.frame import FloatArray, MetricFrame
from infersight.lab.live.servers import LocalPrometheus, LocalVictoriaMetrics, free_port
from infersight.sources.errors import AuthError, ServerUnreachable
from infersight.sources.probe import probe
from infersight.sources.prometheus import PrometheusClient
from infersight.sources.promseries import Series
from infersight.sources.pull import on_grid, pull
from servers import FakeServer, Reply, Request, matrix, ok, require

STORES = ["prometheus", "victoria-metrics"]
STEP = 15.0
HOURS = 3
NODES = 3


def _store(kind: str, **kwargs: object) -> LocalPrometheus | LocalVictoriaMetrics:
    require(kind)
    if kind == "prometheus":
        require("promtool")
        return LocalPrometheus(**kwargs)  # type: ignore[arg-type]
    return LocalVictoriaMetrics(**kwargs)  # type: ignore[arg-type]


# -- backfilled history -------------------------------------------------------------------------


@dataclass(frozen=True)
class History:
    t0: float  # first sample
    n: int  # samples per series
    path: Path
    extra_dir: Path  # a higher-priority family covering node-1's queue

    def queue(self, node: int, i: np.ndarray) -> np.ndarray:
        base = node * 10 + i % 7
        return base + (100 + i % 3 if node == 0 else 0)  # node-0 runs two engines: summed

    def gpu_util(self, node: int, i: np.ndarray) -> np.ndarray:
        return (((i * 7 + node) % 101) + 50) / 2 / 100  # mean of two GPUs, 0-100 → 0-1


def _write_history(dir: Path) -> History:
    t_end = math.floor(time.time() / STEP) * STEP - 600
    n = int(HOURS * 3600 / STEP)
    t0 = t_end - (n - 1) * STEP
    ts = t0 + STEP * np.arange(n)
    i = np.arange(n)
    families: list[tuple[str, str, list[tuple[str, str, np.ndarray]]]] = []
    waiting, running, gpu, cpu, mem_a, mem_t, custom = ([] for _ in range(7))
    for k in range(NODES):
        node = f"node-{k}"
        waiting.append((f'{{instance="{node}:8000",model_name="m"}}', "", k * 10 + i % 7))
        running.append((f'{{instance="{node}:8000",model_name="m"}}', "", np.full(n, 2.0)))
        for g, vals in (("0", (i * 7 + k) % 101), ("1", np.full(n, 50))):
            labels = f'{{Hostname="{node}",gpu="{g}",instance="{node}:9400"}}'
            gpu.append((labels, "", vals.astype(float)))
        idle = 0.5 + 0.1 * k
        for mode, frac in (("idle", idle), ("user", 1 - idle)):
            labels = f'{{cpu="0",instance="{node}:9100",mode="{mode}"}}'
            cpu.append((labels, "_total", frac * STEP * i))
        mem_a.append((f'{{instance="{node}:9100"}}', "", np.full(n, (0.25 + 0.1 * k) * 8e9)))
        mem_t.append((f'{{instance="{node}:9100"}}', "", np.full(n, 8e9)))
    waiting.append(('{instance="node-0:8001",model_name="m"}', "", 100 + i % 3))
    custom.append(('{instance="node-1:7000"}', "", np.full(n, 999.0)))
    families = [
        ("vllm:num_requests_waiting", "gauge", waiting),
        ("vllm:num_requests_running", "gauge", running),
        ("DCGM_FI_DEV_GPU_UTIL", "gauge", gpu),
        ("node_cpu_seconds", "counter", cpu),
        ("node_memory_MemAvailable_bytes", "gauge", mem_a),
        ("node_memory_MemTotal_bytes", "gauge", mem_t),
        ("custom_queue", "gauge", custom),
    ]
    path = dir / "history.om"
    with open(path, "w", encoding="utf-8") as f:
        for name, kind, series in families:
            f.write(f"# TYPE {name} {kind}\n")
            for labels, suffix, vals in series:
                f.writelines(
                    f"{name}{suffix}{labels} {v!r} {int(t)}\n"
                    for t, v in zip(ts, vals.astype(float).tolist(), strict=True)
                )
        f.write("# EOF\n")
    extra = dir / "families"
    extra.mkdir()
    (extra / "custom.yaml").write_text(
        "family: customq\ntitle: test family\nlayer_hint: service\npriority: 5\nsource: test\n"
        'detect: ["custom_queue"]\nsignals:\n'
        "  service.queue_length:\n    - sum by ($by) (custom_queue)\n"
    )
    return History(t0, n, path, extra)


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> History:
    return _write_history(tmp_path_factory.mktemp("history"))


@pytest.fixture(scope="module", params=STORES)
def backfilled(request: pytest.FixtureRequest, history: History) -> Iterator[str]:
    with _store(request.param, backfill=[history.path]) as server:
        yield server.url


@pytest.fixture(scope="module")
def catalog(history: History) -> Catalog:
    return load_catalog(extra_dirs=[history.extra_dir])


@pytest.mark.server
def test_probe_backfilled(backfilled: str, catalog: Catalog) -> None:
    res = probe(PrometheusClient(backfilled), catalog)
    assert res.families == ("customq", "vllm", "dcgm", "node")
    sig = res.signals
    assert sig["service.queue_length"].family == "customq"
    assert sig["inference.gpu_util"].family == "dcgm" and sig["inference.gpu_util"].available
    e2e = sig["service.e2e_latency_p99"]
    assert not e2e.available
    assert e2e.reason == "vllm present but vllm:e2e_request_latency_seconds_bucket missing"
    assert "no exporter found" in sig["dependency.vector_query_p99"].reason
    avail, total = res.coverage["infrastructure"]
    assert 0 < avail < total
    assert res.to_dict()["signals"][0]["signal"] == next(iter(sig))


def _row(frame: MetricFrame, signal: str, instance: str) -> FloatArray:
    s = frame.get(signal)
    assert s is not None, f"{signal} not pulled"
    row = s.row(instance)
    assert row is not None, f"{signal}: {instance} not in {s.instances}"
    return row


@pytest.mark.server
def test_pull_backfilled_values(backfilled: str, history: History, catalog: Catalog) -> None:
    start = history.t0 + 1800  # the 5m rate window is full from here on
    end = history.t0 + (history.n - 1) * STEP
    calls: list[tuple[int, int]] = []
    wanted = [
        "service.queue_length",
        "inference.gpu_util",
        "infra.cpu_util",
        "infra.mem_available_ratio",
        "service.e2e_latency_p99",
    ]
    res = pull(
        PrometheusClient(backfilled),
        catalog,
        start,
        end,
        STEP,
        wanted,
        progress=lambda d, t: calls.append((d, t)),
    )
    f = res.frame
    i = np.arange(history.n)[int(1800 / STEP) :]
    assert f.n == len(i) and f.start == start
    nodes = tuple(f"node-{k}" for k in range(NODES))
    q = f.get("service.queue_length")
    assert q is not None and q.instances == nodes
    for k in (0, 2):
        np.testing.assert_array_equal(q.row(f"node-{k}"), history.queue(k, i))
    np.testing.assert_array_equal(q.row("node-1"), np.full(len(i), 999.0))  # customq wins
    assert res.per_signal_source["service.queue_length"] == "customq,vllm"
    assert {"customq", "vllm"} <= set(res.families)  # what a bundle's source names
    g = f.get("inference.gpu_util")
    assert g is not None and g.instances == nodes
    for k in range(NODES):
        node = f"node-{k}"
        assert_allclose(_row(f, "inference.gpu_util", node), history.gpu_util(k, i), rtol=1e-12)
        assert_allclose(_row(f, "infra.cpu_util", node), 0.5 - 0.1 * k, rtol=1e-6)
        assert_allclose(_row(f, "infra.mem_available_ratio", node), 0.25 + 0.1 * k, rtol=1e-12)
    assert (
        "vllm:e2e_request_latency_seconds_bucket missing" in res.missing["service.e2e_latency_p99"]
    )
    assert res.queries == 1 + 5  # metric names + one query per (signal, family) that maps it
    assert calls[0] == (0, 5) and calls[-1] == (5, 5)


@pytest.mark.server
def test_chunked_pull_equals_unsplit(backfilled: str, history: History, catalog: Catalog) -> None:
    start, end = history.t0 + 1800, history.t0 + 1800 + 599 * STEP  # 600 grid points
    sigs = ["service.queue_length", "infra.cpu_util"]
    whole = pull(PrometheusClient(backfilled), catalog, start, end, STEP, sigs)
    split = pull(
        PrometheusClient(backfilled, max_points_per_query=100), catalog, start, end, STEP, sigs
    )
    assert whole.queries == 1 + 3 and split.queries == 1 + 3 * 6
    for s in sigs:
        a, b = whole.frame.get(s), split.frame.get(s)
        assert a is not None and b is not None and a.instances == b.instances
        np.testing.assert_array_equal(a.values, b.values)


# -- a live scrape ------------------------------------------------------------------------------


def _exposition(elapsed: float) -> str:
    r = 10 * elapsed
    return f"""# TYPE vllm:num_requests_waiting gauge
vllm:num_requests_waiting{{model_name="m"}} 7
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{{model_name="m"}} 3
# TYPE vllm:request_success_total counter
vllm:request_success_total{{finished_reason="stop",model_name="m"}} {r}
# TYPE vllm:e2e_request_latency_seconds histogram
vllm:e2e_request_latency_seconds_bucket{{le="0.1",model_name="m"}} 0
vllm:e2e_request_latency_seconds_bucket{{le="0.5",model_name="m"}} {r}
vllm:e2e_request_latency_seconds_bucket{{le="+Inf",model_name="m"}} {r}
vllm:e2e_request_latency_seconds_sum{{model_name="m"}} {0.3 * r}
vllm:e2e_request_latency_seconds_count{{model_name="m"}} {r}
# TYPE DCGM_FI_DEV_GPU_UTIL gauge
DCGM_FI_DEV_GPU_UTIL{{gpu="0",Hostname="node-1"}} 40
DCGM_FI_DEV_GPU_UTIL{{gpu="1",Hostname="node-1"}} 60
# TYPE node_cpu_seconds_total counter
node_cpu_seconds_total{{cpu="0",mode="idle"}} {0.75 * elapsed}
node_cpu_seconds_total{{cpu="0",mode="user"}} {0.25 * elapsed}
# TYPE node_memory_MemTotal_bytes gauge
node_memory_MemTotal_bytes 8e+09
node_memory_MemAvailable_bytes 2e+09
"""


@pytest.mark.server
@pytest.mark.parametrize("kind", STORES)
def test_probe_and_pull_a_live_scrape(kind: str) -> None:
    t_start = time.time()
    exporter = FakeServer(
        lambda r: (200, _exposition(time.time() - t_start)), "text/plain; version=0.0.4"
    )
    target = exporter.url.removeprefix("http://")
    with exporter, _store(kind, scrape_targets=[target], scrape_interval="1s") as server:
        client = PrometheusClient(server.url)
        deadline = time.time() + 30
        while time.time() < deadline:  # until the 4 s rate window before `end` is full
            got = client.query("count_over_time(vllm:num_requests_waiting[1m])", time.time())
            if got and got[0].values[0] >= 8:
                break
            time.sleep(0.5)
        else:
            pytest.fail(f"{kind} stored fewer than 8 scrapes in 30 s: {server.log_tail()}")
        catalog = load_catalog()
        res = probe(client, catalog)
        assert {"vllm", "dcgm", "node", "prometheus"} <= set(res.families)
        assert res.signals["service.e2e_latency_p99"].available
        end = math.floor(time.time()) - 1
        out = pull(client, catalog, end - 10, end, 1.0, window="4s")
    f = out.frame
    host = "127.0.0.1"

    def last(signal: str, who: str = host) -> float:
        assert signal in f, out.missing.get(signal)
        row = _row(f, signal, who)
        return float(row[~np.isnan(row)][-1])

    assert last("service.queue_length") == 7
    assert last("inference.running_requests") == 3
    assert last("inference.gpu_util", "node-1") == pytest.approx(0.5)  # 0-100 → 0-1, mean
    assert f.get("inference.gpu_util").instances == ("node-1",)  # type: ignore[union-attr]
    assert last("infra.mem_available_ratio") == pytest.approx(0.25)
    assert last("service.e2e_latency_avg") == pytest.approx(0.3)
    assert last("service.e2e_latency_p50") == pytest.approx(0.3)
    assert last("service.e2e_latency_p99") == pytest.approx(0.496)
    assert last("service.request_rate") == pytest.approx(10, rel=0.1)
    assert last("infra.cpu_util") == pytest.approx(0.25, abs=0.03)
    assert last("infra.target_up") == 1


# -- failures and helpers (fake server) ---------------------------------------------------------

NAMES = ["vllm:num_requests_waiting", "vllm:num_requests_running", "DCGM_FI_DEV_GPU_UTIL"]


def _partly_broken(req: Request) -> Reply:
    if req.path.endswith("/values"):
        return ok(NAMES)
    q = req.params["query"]
    if "DCGM" in q:
        return 400, {"status": "error", "errorType": "bad_data", "error": "boom at char 3"}
    if "num_requests_running" in q:
        return 503, "overloaded"
    pts = [(float(req.params["start"]) + 15 * j, "4") for j in range(3)]
    return matrix([({"instance": "n1:8000"}, pts), ({"instance": "n1:8001"}, pts)])


def test_pull_reports_failing_signals_and_goes_on() -> None:
    with FakeServer(_partly_broken) as fake:
        client = PrometheusClient(fake.url, retries=1, backoff=0.01)
        sigs = ["service.queue_length", "inference.gpu_util", "inference.running_requests"]
        res = pull(client, load_catalog(), 1000, 1030, 15, sigs)
    q = res.frame.get("service.queue_length")
    assert q is not None and q.instances == ("n1",)
    assert q.values.tolist() == [[8.0, 8.0, 8.0]]  # two engines on n1, combine=sum
    assert "boom at char 3" in res.missing["inference.gpu_util"]
    assert "HTTP 503" in res.missing["inference.running_requests"]
    assert res.queries == 1 + 1 + 1 + 2  # names, queue, gpu (no retry), running (retried)


def test_pull_raises_when_unreachable() -> None:
    client = PrometheusClient(f"http://127.0.0.1:{free_port()}", retries=0)
    with pytest.raises(ServerUnreachable):
        pull(client, load_catalog(), 0, 60, 15)


def test_pull_raises_on_auth_failure() -> None:
    def names_ok_then_401(req: Request) -> Reply:
        return ok(NAMES) if req.path.endswith("/values") else (401, "no")

    with FakeServer(names_ok_then_401) as fake, pytest.raises(AuthError):
        pull(PrometheusClient(fake.url), load_catalog(), 0, 60, 15)


def test_on_grid_tolerates_float_drift_and_drops_off_grid_points() -> None:
    ts = np.array([100.0 + 1e-7, 115.0 - 1e-7, 122.0, 145.0, 500.0])
    row = on_grid(Series({}, ts, np.array([1.0, 2.0, 3.0, 4.0, 5.0])), 100.0, 15.0, 4)
    assert row[:2].tolist() == [1.0, 2.0] and math.isnan(row[2]) and row[3] == 4.0


def test_pull_with_a_sub_second_step_and_a_sub_millisecond_start_keeps_the_data() -> None:
    # `--at now` has sub-millisecond digits; the server only sees milliseconds and answers on
    # its own (rounded) grid. With a 100 ms step every point used to fall "off the grid".
    def answer(req: Request) -> Reply:
        if req.path.endswith("/values"):
            return ok(NAMES)
        start, end, step = (float(req.params[k]) for k in ("start", "end", "step"))
        n = math.floor((end - start) / step + 1e-9) + 1
        pts = [(round(start + j * step, 3), "4") for j in range(n)]
        return matrix([({"instance": "n1:8000"}, pts)])

    with FakeServer(answer) as fake:
        client = PrometheusClient(fake.url, retries=0)
        res = pull(client, load_catalog(), 1000.0004, 1000.5004, 0.1, ["service.queue_length"])
    q = res.frame.get("service.queue_length")
    assert q is not None, res.missing
    assert q.values.tolist() == [[4.0] * 6]
