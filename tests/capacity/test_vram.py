"""Steady and peak VRAM per instance from history: from a bundle, and from a real
Prometheus holding a week of DCGM samples."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from infersight.bundle import write_bundle
from infersight.capacity.vram import RATIO, USED, vram_report
from infersight.cli import app
from infersight.cli.common import CommandError
from infersight.frame import MetricFrame, SignalSeries
from infersight.lab.live.servers import LocalPrometheus

runner = CliRunner()
GIB = 2**30
CARD = 80 * GIB
STEP = 300.0


def _history(start: float, n: int) -> dict[str, np.ndarray]:
    """Shares of the card per instance: gpu-a steady 60% with one 93% peak at sample 700;
    gpu-b steady 50%, peaks at 75% (tight); gpu-c steady 40%, peaks at 55% (ok)."""
    rng = np.random.default_rng(7)
    a = 0.60 + 0.02 * rng.random(n)
    a[700] = 0.93
    b = 0.50 + 0.02 * rng.random(n)
    b[::97] = 0.75
    c = 0.40 + 0.02 * rng.random(n)
    c[::50] = 0.55
    return {"gpu-a": a, "gpu-b": b, "gpu-c": c}


def _frame(start: float, n: int) -> MetricFrame:
    h = _history(start, n)
    insts = (*tuple(h), "gpu-d")
    ratio = np.vstack([*h.values(), np.full(n, np.nan)])  # gpu-d reports nothing
    return MetricFrame(
        start, STEP, n, {RATIO: SignalSeries(insts, ratio), USED: SignalSeries(insts, ratio * CARD)}
    )


def test_report_ranks_at_risk_first_and_dates_its_peak() -> None:
    start = 1_764_892_800.0  # 2025-12-05T00:00Z
    rows = vram_report(_frame(start, 2016))
    by = {r.instance: r for r in rows}
    assert [r.instance for r in rows] == ["gpu-a", "gpu-b", "gpu-c", "gpu-d"]
    a = by["gpu-a"]
    assert a.status == "at_risk" and a.peak == pytest.approx(0.93)
    assert a.peak_at == start + 700 * STEP and a.headroom == pytest.approx(0.07)
    assert a.steady is not None and 0.60 <= a.steady <= 0.62
    assert a.card == pytest.approx(CARD)
    assert [t for t, _ in a.risky_days] == [start + 700 * STEP]
    assert by["gpu-b"].status == "tight" and by["gpu-c"].status == "ok"
    # no data is missing, never safe
    assert by["gpu-d"].status == "missing" and by["gpu-d"].headroom is None


def test_vram_from_a_bundle(tmp_path: Path) -> None:
    start = time.time() - 2016 * STEP
    bundle = write_bundle(
        tmp_path / "b.tar.gz", {"incident": _frame(start, 2016)}, {"kind": "test"}
    )
    res = runner.invoke(app, ["capacity", "vram", str(bundle), "--json"])
    assert res.exit_code == 1, res.output  # an instance at risk
    rows = json.loads(res.stdout)["instances"]
    assert rows[0]["instance"] == "gpu-a" and rows[0]["status"] == "at_risk"


def _openmetrics(path: Path, end: float, n: int) -> Path:
    h = _history(end - n * STEP, n)
    lines = ["# TYPE DCGM_FI_DEV_FB_USED gauge", "# TYPE DCGM_FI_DEV_FB_FREE gauge"]
    card_mib = CARD / 2**20
    for metric in ("DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_FB_FREE"):
        for host, shares in h.items():
            for i, s in enumerate(shares):
                used = round(s * card_mib)
                v = used if metric.endswith("USED") else card_mib - used
                ts = end - (n - i) * STEP
                lines.append(
                    f'{metric}{{instance="{host}:9400",Hostname="{host}",gpu="0"}} {v} {ts:.0f}'
                )
    path.write_text("\n".join([*lines, "# EOF", ""]))
    return path


@pytest.mark.server
@pytest.mark.slow
def test_vram_from_prometheus_over_a_week(
    tmp_path: Path, prometheus_with_backfill: Callable[[Sequence[Path]], LocalPrometheus]
) -> None:
    n = 2016  # a week of 5-minute samples
    end = float(int(time.time() // STEP * STEP)) - 3 * 3600  # backfilled blocks end in the past
    prom = prometheus_with_backfill([_openmetrics(tmp_path / "dcgm.om", end, n)])
    res = runner.invoke(app, ["capacity", "vram", "-p", prom.url, "--days", "7.5", "--json"])
    assert res.exit_code == 1, res.output
    rows = {r["instance"]: r for r in json.loads(res.stdout)["instances"]}
    a = rows["gpu-a"]
    assert a["status"] == "at_risk" and a["peak_share"] == pytest.approx(0.93, abs=0.005)
    assert abs(a["peak_at"] - (end - (n - 700) * STEP)) <= STEP
    assert rows["gpu-b"]["status"] == "tight" and rows["gpu-c"]["status"] == "ok"
    assert a["card_bytes"] == pytest.approx(CARD, rel=1e-3)


@pytest.mark.server
@pytest.mark.slow
def test_vram_reads_the_history_up_to_at(
    tmp_path: Path, prometheus_with_backfill: Callable[[Sequence[Path]], LocalPrometheus]
) -> None:
    """`--at` on a server (issue 39): history that ended four days ago is read up to that
    moment; without it the same two days up to now hold no VRAM at all ("cannot judge")."""
    n = 800  # under three days of 5-minute samples, gpu-a's peak at sample 700
    end = float(int(time.time() // STEP * STEP)) - 4 * 86400
    prom = prometheus_with_backfill([_openmetrics(tmp_path / "dcgm.om", end, n)])
    now = runner.invoke(app, ["capacity", "vram", "-p", prom.url, "--days", "2", "--json"])
    assert now.exit_code == 3, now.output
    then = runner.invoke(
        app, ["capacity", "vram", "-p", prom.url, "--days", "2", "--at", f"{end:.0f}", "--json"]
    )
    assert then.exit_code == 1, then.output  # gpu-a at risk, as over the whole history
    rows = {r["instance"]: r for r in json.loads(then.stdout)["instances"]}
    assert rows["gpu-a"]["status"] == "at_risk"
    assert abs(rows["gpu-a"]["peak_at"] - (end - (n - 700) * STEP)) <= STEP
    tomorrow = f"{time.time() + 86400:.0f}"
    later = runner.invoke(app, ["capacity", "vram", "-p", prom.url, "--at", tomorrow])
    assert isinstance(later.exception, CommandError) and later.exception.code == 2
    assert "in the future" in later.exception.message


def test_vram_from_a_bundle_up_to_at(tmp_path: Path) -> None:
    start = time.time() - 2016 * STEP
    bundle = write_bundle(
        tmp_path / "b.tar.gz", {"incident": _frame(start, 2016)}, {"kind": "test"}
    )
    before_peak = f"{start + 600 * STEP:.0f}"  # gpu-a's 93% peak is at sample 700
    res = runner.invoke(app, ["capacity", "vram", str(bundle), "--at", before_peak, "--json"])
    assert res.exit_code == 0, res.output  # gpu-a not at risk yet, gpu-b tight: no action
    rows = {r["instance"]: r for r in json.loads(res.stdout)["instances"]}
    assert rows["gpu-a"]["status"] != "at_risk" and rows["gpu-a"]["peak_share"] < 0.7
