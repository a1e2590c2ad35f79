"""Bundle write/read throughput (tar.gz and directory) and exposition parse throughput.

Run: .venv/bin/python -m bench.bundle_io
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from bench.report import usage, write_section
from infersight.bundle import read_bundle, write_bundle
from infersight.frame import MetricFrame
from infersight.signals import all_signals
from infersight.sources.exposition import parse_exposition

SIGNALS, INSTANCES, STEP, HOURS = 60, 100, 15.0, 1
REPEAT = 3


def best(fn: Callable[[], object]) -> float:
    """Best wall time of REPEAT runs, seconds."""
    times = []
    for _ in range(REPEAT):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def make_frame() -> MetricFrame:
    n = int(HOURS * 3600 / STEP)
    rng = np.random.default_rng(0)
    insts = [f"node-{i:03d}:8000" for i in range(INSTANCES)]
    frame = MetricFrame(1_700_000_000.0, STEP, n)
    for name in list(all_signals())[:SIGNALS]:
        frame = frame.with_series(name, insts, rng.normal(100, 10, (INSTANCES, n)).round(3))
    return frame


def exposition_text(scrapes: int = 20, series: int = 2_000) -> tuple[str, int]:
    """OpenMetrics text: `scrapes` concatenated scrapes of a vLLM-like target."""
    lines = []
    for k in range(scrapes):
        lines.append("# TYPE vllm:e2e_request_latency_seconds histogram")
        for i in range(series):
            le = ("0.1", "0.5", "1", "5", "+Inf")[i % 5]
            lines.append(
                f'vllm:e2e_request_latency_seconds_bucket{{engine="{i // 5}",'
                f'model_name="llama-3-8b",le="{le}"}} {k * 10 + i}'
            )
        lines.append("# EOF")
    return "\n".join(lines) + "\n", scrapes * series


def main() -> None:
    frame = make_frame()
    points = frame.points()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for kind, name in (("tar.gz", "b.tar.gz"), ("directory", "b")):
            path = Path(tmp) / name
            w = best(lambda p=path: write_bundle(p, {"incident": frame}, {"kind": "bench"},
                                                 overwrite=True))  # fmt: skip
            r = best(lambda p=path: read_bundle(p))
            size = path.stat().st_size if path.is_file() else sum(
                f.stat().st_size for f in path.rglob("*") if f.is_file()
            )  # fmt: skip
            rows.append(
                f"| {kind} | {points:,} | {size / 2**20:.1f} | {w:.2f} | {points / w / 1e6:.2f} "
                f"| {r:.2f} | {points / r / 1e6:.2f} |"
            )
    text, samples = exposition_text()
    p = best(lambda: parse_exposition(text, start=0.0, interval=15.0))
    body = "\n".join(
        [
            f"{SIGNALS} signals × {INSTANCES} instances × {HOURS} h at {STEP:.0f} s, best of "
            f"{REPEAT}; read includes full verification (sha256, schema, grid).",
            "",
            "| bundle | points | size MiB | write s | write Mpts/s | read s | read Mpts/s |",
            "|---|---:|---:|---:|---:|---:|---:|",
            *rows,
            "",
            "| exposition parse | samples | MiB | s | samples/s |",
            "|---|---:|---:|---:|---:|",
            f"| OpenMetrics, 20 concatenated scrapes of 2,000 histogram buckets | {samples:,} "
            f"| {len(text) / 2**20:.1f} | {p:.2f} | {samples / p:,.0f} |",
        ]
    )
    print(body)
    write_section(
        "bundle_io", "Bundle and import throughput", ".venv/bin/python -m bench.bundle_io", body
    )


if __name__ == "__main__":
    usage(__doc__)
    main()
