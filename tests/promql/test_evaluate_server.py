"""The local evaluator against a real Prometheus 2.42 over the same backfilled samples.

Raw series (gauges, counters with resets, histograms with a reset, a DCGM bitmask, a series
with a gap) are written as OpenMetrics, backfilled with promtool, and every expression is asked
of the server's /api/v1/query_range and of `evaluate` at the same grid points.

Scrape timestamps carry a fractional-second offset, so no sample lies exactly on a window edge
(t - range or t - 5m): Prometheus 2.x closes windows on the left, 3.x and `evaluate` open them.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import httpx
import numpy as np
import pytest

from infersight.exporters import IDENTITY_LABELS, load_catalog
from infersight.lab.live.servers import LocalPrometheus
from infersight.promql import parse
from infersight.promql.evaluate import evaluate
from infersight.sources.raw import RawStore, labels_of

pytestmark = pytest.mark.server

STEP = 15.0
HOURS = 3
RTOL = 1e-6

Labels = dict[str, str]
Family = tuple[str, str, list[tuple[str, Labels, np.ndarray, np.ndarray]]]


def _scrape_times(rng: np.random.Generator, t0: float, offset: float) -> np.ndarray:
    k = np.arange(int(HOURS * 3600 / STEP))
    jitter = rng.uniform(-0.2, 0.2, k.size)
    return np.round(t0 + k * STEP + offset + jitter, 3)


def _counter(rng: np.random.Generator, n: int, mean: float, resets: Sequence[int]) -> np.ndarray:
    inc = rng.poisson(mean, n).astype(np.float64)
    c = np.cumsum(inc)
    for r in resets:  # the process restarts: the counter starts again from a small value
        c[r:] -= c[r - 1] - rng.integers(0, 3)
    return c


def build(t0: float) -> tuple[RawStore, list[Family]]:
    rng = np.random.default_rng(7)
    fams: dict[str, Family] = {}

    def add(family: str, kind: str, name: str, labels: Labels, ts: np.ndarray, v: np.ndarray):
        fams.setdefault(family, (family, kind, []))[2].append((name, labels, ts, v))

    for i, (host, off) in enumerate([("node-1", 2.25), ("node-2", 5.5), ("node-3", 9.75)]):
        inst = f"{host}:8000"
        ts = _scrape_times(rng, t0, off)
        n = ts.size
        base = {"instance": inst, "job": "engine"}
        q = np.clip(np.cumsum(rng.normal(0, 1.5, n)) + 8, 0, None).round()
        add("queue_len", "gauge", "queue_len", {**base, "model_name": "m"}, ts, q)
        add("vllm:num_requests_waiting", "gauge", "vllm:num_requests_waiting", base, ts, q * 2)
        if i != 2:  # node-3 has no python_info: `and on` must drop it
            add("python_info", "gauge", "python_info", {**base, "version": "3.11"}, ts, ts * 0 + 1)
        resets = [300 + 100 * i] if i < 2 else []
        for code, mean in (("200", 20.0), ("500", 0.5 + i)):
            c = _counter(rng, n, mean, resets)
            add("requests", "counter", "requests_total", {**base, "code": code}, ts, c)
        # a gauge that stops for 20 minutes (a crashed exporter), then comes back
        keep = (ts < t0 + 3600) | (ts > t0 + 4800)
        add("gapped", "gauge", "gapped", base, ts[keep], rng.uniform(0, 10, n)[keep].round(2))
        # histogram: cumulative buckets, one reset on node-1
        obs = rng.lognormal(math.log(0.3 + 0.2 * i), 0.8, (n, 40))
        les = [0.05, 0.1, 0.25, 0.5, 1.0, 2.5, math.inf]
        per_scrape = np.stack([(obs <= le).sum(axis=1) for le in les])  # (buckets, n)
        cum = np.cumsum(per_scrape, axis=1).astype(np.float64)
        sums = np.cumsum(obs.sum(axis=1))
        if i == 0:
            cum[:, 400:] -= cum[:, 399:400]
            sums[400:] -= sums[399]
        for le, row in zip(les, cum, strict=True):
            le_text = "+Inf" if math.isinf(le) else repr(le)
            add("lat_seconds", "histogram", "lat_seconds_bucket", {**base, "le": le_text}, ts, row)
        add("lat_seconds", "histogram", "lat_seconds_sum", base, ts, sums)
        add("lat_seconds", "histogram", "lat_seconds_count", base, ts, cum[-1])
        # a counter whose scrapes fail 30% of the time: uneven sample spacing
        kept = rng.uniform(size=n) > 0.3
        c = _counter(rng, n, 5.0, [250])
        add("sparse", "counter", "sparse_total", base, ts[kept], c[kept])
        # bucket-like gauges: not monotonic, duplicate and non-positive bounds, a gappy bucket
        for le in ("-1", "0", "0.5", "1", "1.0", "5", "+Inf"):
            v = rng.integers(0, 6, n).astype(np.float64) * (rng.uniform(size=n) > 0.1)
            keep = (ts < t0 + 5000) | (ts > t0 + 6000) if le == "5" else ts > 0
            add("weird", "gauge", "weird_bucket", {**base, "le": le}, ts[keep], v[keep])
            if le != "+Inf":
                add("noinf", "gauge", "noinf_bucket", {**base, "le": le}, ts, v)
        dts = _scrape_times(rng, t0, off + 0.125)
        for gpu in ("0", "1"):
            bits = rng.choice([0, 1, 4, 8, 32, 64, 72, 128, 160], dts.size).astype(np.float64)
            lbl = {"instance": f"{host}:9400", "job": "dcgm", "gpu": gpu, "Hostname": host}
            add(
                "DCGM_FI_DEV_CLOCKS_EVENT_REASONS",
                "gauge",
                "DCGM_FI_DEV_CLOCKS_EVENT_REASONS",
                lbl,
                dts,
                bits,
            )
    store = RawStore()
    for _, _, series in fams.values():
        for name, labels, ts, v in series:
            store.add_many(name, labels_of(labels), ts.tolist(), v.tolist())
    return store, list(fams.values())


def write_openmetrics(families: list[Family], path: Path) -> None:
    """Minimal OpenMetrics writer: TYPE line, then each series' samples in time order."""
    with path.open("w") as f:
        for family, kind, series in families:
            f.write(f"# TYPE {family} {kind}\n")
            for name, labels, ts, v in series:
                lbl = ",".join(f'{k}="{val}"' for k, val in sorted(labels.items()))
                for t, x in zip(ts.tolist(), v.tolist(), strict=True):
                    f.write(f"{name}{{{lbl}}} {x!r} {t:.3f}\n")
        f.write("# EOF\n")


def _dcgm_throttle() -> str:
    m = load_catalog().families["dcgm"].mappings["infra.gpu_throttle"][0]
    return m.render("5m", IDENTITY_LABELS)


EXPRESSIONS: list[str] = [
    "queue_len",
    "vllm:num_requests_waiting",
    "gapped",
    "queue_len offset 10m",
    'requests_total{code="500"}',
    'requests_total{code!="500", instance=~"node-[12]:.*"}',
    'requests_total{instance!~"node-1.*"}',
    "rate(requests_total[5m])",
    "rate(requests_total[1m])",
    "increase(requests_total[5m])",
    "increase(requests_total[10m] offset 5m)",
    "irate(requests_total[1m])",
    "delta(queue_len[5m])",
    "changes(queue_len[5m])",
    "resets(requests_total[30m])",
    "avg_over_time(queue_len[5m])",
    "sum_over_time(gapped[10m])",
    "max_over_time(queue_len[5m])",
    "min_over_time(gapped[5m])",
    "last_over_time(gapped[2m])",
    "rate(gapped[5m])",
    "rate(sparse_total[5m])",
    "increase(sparse_total[2m])",
    "irate(sparse_total[1m])",
    "delta(sparse_total[3m])",
    "histogram_quantile(0.01, weird_bucket)",
    "histogram_quantile(0.3, weird_bucket)",
    "histogram_quantile(0.5, weird_bucket)",
    "histogram_quantile(0.95, weird_bucket)",
    "histogram_quantile(1, weird_bucket)",
    "histogram_quantile(0, weird_bucket)",
    "histogram_quantile(-0.5, weird_bucket)",
    "histogram_quantile(1.5, weird_bucket)",
    "histogram_quantile(0.5, noinf_bucket)",
    "histogram_quantile(0.99, sum by (le, instance) (rate(lat_seconds_bucket[5m])))",
    "histogram_quantile(0.5, sum by (le) (rate(lat_seconds_bucket[5m])))",
    "histogram_quantile(0.9, rate(lat_seconds_bucket[2m]))",
    "histogram_quantile(1, sum by (le, instance) (increase(lat_seconds_bucket[5m])))",
    "sum by (instance) (rate(lat_seconds_sum[5m]))"
    " / sum by (instance) (rate(lat_seconds_count[5m]))",
    'sum by (instance) (rate(requests_total{code=~"5.."}[5m]))'
    " / sum by (instance) (rate(requests_total[5m]))",
    "sum(rate(requests_total[5m]))",
    "avg without (instance) (queue_len)",
    "count by (job) (queue_len)",
    "max by (job) (queue_len)",
    "min by (instance, job) (gapped)",
    "queue_len > bool 8",
    "queue_len > 8",
    "8 < queue_len",
    "queue_len == 0",
    "max by (instance) (queue_len) >= bool max by (instance) (gapped)",
    "queue_len and on (instance) python_info",
    "rate(requests_total[5m]) and on (instance, job) python_info",
    "sum by (instance) (rate(requests_total[5m])) unless on (instance) python_info",
    "queue_len or gapped",
    "gapped or on (instance) queue_len",
    # identity from another label (a gateway's per-server figures keyed by the server)
    'label_replace(queue_len, "node", "$1", "instance", "(.+):[0-9]+")',
    'max by (node) (label_replace(rate(requests_total[5m]), "node", "host-${1}", "instance",'
    ' "node-([0-9]).*"))',
    'label_replace(queue_len, "host", "$h/$2$$", "instance", "(?P<h>[^:]+):(.*)")',
    'label_replace(queue_len, "job", "", "instance", "node-1.*")',
    'label_replace(gapped, "node", "$1", "instance", "nomatch(.*)")',
    "clamp_max(queue_len, 7)",
    "clamp_min(queue_len, 9)",
    "floor(queue_len / 3) % 2",
    "ceil(gapped)",
    "abs(delta(queue_len[5m]))",
    "-queue_len + 1",
    "2 ^ (queue_len / 10)",
    "queue_len / 0",
    "-queue_len % 3",
    "1 - avg by (instance) (rate(requests_total[5m]) / 100)",
    _dcgm_throttle(),
]


def _query_range(url: str, expr: str, start: float, step: float, n: int) -> list[dict]:
    end = start + step * (n - 1)
    params = {"query": expr, "start": f"{start:.3f}", "end": f"{end:.3f}", "step": f"{step:g}"}
    r = httpx.get(f"{url}/api/v1/query_range", params=params, timeout=30)
    assert r.status_code == 200, f"{expr}: {r.text}"
    result: list[dict] = r.json()["data"]["result"]
    return result


def _as_rows(result: list[dict], start: float, step: float, n: int) -> dict[tuple, np.ndarray]:
    rows: dict[tuple, np.ndarray] = {}
    for s in result:
        row = np.full(n, np.nan)
        for ts, val in s["values"]:
            row[round((float(ts) - start) / step)] = float(val)
        rows[tuple(sorted(s["metric"].items()))] = row
    return rows


def _compare(expr: str, server: dict[tuple, np.ndarray], mine: dict[tuple, np.ndarray]) -> None:
    # a series the server returns with only NaN values is "absent" for the evaluator
    server = {k: v for k, v in server.items() if not np.all(np.isnan(v))}
    assert set(mine) == set(server), f"{expr}: series differ: {set(mine) ^ set(server)}"
    for key, want in server.items():
        got = mine[key]
        assert np.array_equal(np.isnan(got), np.isnan(want)), (
            f"{expr} {dict(key)}: presence differs at "
            f"{np.nonzero(np.isnan(got) != np.isnan(want))[0][:10]}"
        )
        ok = ~np.isnan(want)
        np.testing.assert_allclose(got[ok], want[ok], rtol=RTOL, atol=1e-9, err_msg=expr)


def test_evaluator_matches_prometheus(
    tmp_path: Path, prometheus_with_backfill: Callable[[Sequence[Path]], LocalPrometheus]
) -> None:
    t0 = float(int(time.time()) // 3600 * 3600 - 5 * 3600)
    store, families = build(t0)
    om = tmp_path / "history.om"
    write_openmetrics(families, om)
    prom = prometheus_with_backfill([om])
    start, step, n = t0 + 1200, 37.0, int((HOURS * 3600 - 1500) / 37)
    compared, failures = 0, []
    for expr in EXPRESSIONS:
        server = _as_rows(_query_range(prom.url, expr, start, step, n), start, step, n)
        mine = {
            tuple(sorted(lb.items())): v for lb, v in evaluate(parse(expr), store, start, step, n)
        }
        try:
            assert server or "noinf" in expr, f"{expr}: no series; the test data miss the point"
            _compare(expr, server, mine)
        except AssertionError as exc:
            failures.append(f"{expr}: " + " ".join(str(exc).split())[:400])
        compared += sum(int(np.count_nonzero(~np.isnan(v))) for v in server.values())
    assert not failures, "\n".join(failures)
    assert compared > 50 * len(EXPRESSIONS)
