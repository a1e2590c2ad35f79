"""Pull 60 signals × 100 instances × 1 h at 15 s from a local Prometheus (and VictoriaMetrics).

History is generated as OpenMetrics (60 gauge metrics × 100 instances), backfilled with promtool
(imported over HTTP for VictoriaMetrics), and mapped to 60 canonical signals by a benchmark-only
exporter family loaded from a temp dir. Reports the wall time of `pull`, its HTTP requests and
points per second. Run: `.venv/bin/python -m bench.prometheus_pull`.
"""

from __future__ import annotations

import math
import statistics
import tempfile
import time
from pathlib import Path

from bench.report import usage, write_section
from infersight.exporters import Catalog, load_catalog
from infersight.lab.live.servers import (
    LocalPrometheus,
    LocalVictoriaMetrics,
    ServerUnavailable,
)
from infersight.signals import all_signals
from infersight.sources.prometheus import PrometheusClient
from infersight.sources.pull import pull

SIGNALS = 60
INSTANCES = 100
STEP = 15.0
HOURS = 1.0
REPEATS = 3


def write_history(path: Path, t_end: float) -> int:
    """60 gauges × 100 instances, one sample per STEP over HOURS; returns the sample count."""
    n = int(HOURS * 3600 / STEP)
    stamps = [int(t_end - (n - 1 - i) * STEP) for i in range(n)]
    count = 0
    with open(path, "w", encoding="utf-8") as f:
        for j in range(SIGNALS):
            f.write(f"# TYPE bench_m{j} gauge\n")
            for k in range(INSTANCES):
                head = f'bench_m{j}{{instance="host-{k:03d}:9000",job="bench"}}'
                f.writelines(f"{head} {(j * 7 + k + i) % 97} {t}\n" for i, t in enumerate(stamps))
                count += n
        f.write("# EOF\n")
    return count


def write_family(folder: Path) -> list[str]:
    signals = list(all_signals())[:SIGNALS]
    lines = [
        "family: bench",
        "title: benchmark-only family",
        "layer_hint: service",
        "priority: 0",
        "source: bench/prometheus_pull.py",
        'detect: ["bench_m0"]',
        "signals:",
    ]
    for j, sig in enumerate(signals):
        lines += [f"  {sig}:", f"    - max by ($by) (bench_m{j})"]
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "bench.yaml").write_text("\n".join(lines) + "\n")
    return signals


def measure(url: str, catalog: Catalog, signals: list[str], t_end: float) -> dict[str, float]:
    start = t_end - (HOURS * 3600 - STEP)
    walls, queries, points = [], 0, 0
    for _ in range(REPEATS):
        client = PrometheusClient(url)
        t = time.perf_counter()
        res = pull(client, catalog, start, t_end, STEP, signals)
        walls.append(time.perf_counter() - t)
        queries, points = res.queries, res.frame.points()
        assert not res.missing, res.missing
        assert len(res.frame.instances) == INSTANCES, len(res.frame.instances)
    wall = statistics.median(walls)
    return {"wall": wall, "queries": queries, "points": points, "rate": points / wall}


def main() -> None:
    t_end = math.floor(time.time() / STEP) * STEP - 600
    rows: list[str] = []
    notes: list[str] = []
    with tempfile.TemporaryDirectory(prefix="infersight-bench-") as tmp:
        d = Path(tmp)
        t = time.perf_counter()
        samples = write_history(d / "history.om", t_end)
        gen = time.perf_counter() - t
        signals = write_family(d / "families")
        catalog = load_catalog(extra_dirs=[d / "families"])
        size_mb = (d / "history.om").stat().st_size / 2**20
        notes.append(
            f"History: {samples:,} samples ({SIGNALS} gauges × {INSTANCES} instances × "
            f"{int(HOURS * 3600 / STEP)} points), {size_mb:.0f} MiB OpenMetrics, generated in "
            f"{gen:.1f} s."
        )
        for name, cls in (
            ("Prometheus", LocalPrometheus),
            ("VictoriaMetrics", LocalVictoriaMetrics),
        ):
            try:
                t = time.perf_counter()
                with cls(backfill=[d / "history.om"]) as server:
                    load = time.perf_counter() - t
                    m = measure(server.url, catalog, signals, t_end)
            except ServerUnavailable as exc:
                notes.append(f"{name} skipped: {exc}")
                continue
            rows.append(
                f"| {name} | {load:.1f} | {m['wall']:.2f} | {m['queries']:.0f} | "
                f"{m['points']:,.0f} | {m['rate']:,.0f} |"
            )
            print(rows[-1], flush=True)
    body = "\n".join(
        [
            f"`pull` of {SIGNALS} signals × {INSTANCES} instances × {HOURS:g} h at {STEP:g} s "
            f"(median of {REPEATS} pulls; default client: 8 concurrent requests).",
            "",
            *notes,
            "",
            "| store | backfill + start (s) | pull wall (s) | HTTP requests | points | points/s |",
            "|---|---:|---:|---:|---:|---:|",
            *rows,
        ]
    )
    print(body)
    write_section(
        "prometheus_pull",
        "Pull from a local Prometheus",
        ".venv/bin/python -m bench.prometheus_pull",
        body,
    )


if __name__ == "__main__":
    usage(__doc__)
    main()
