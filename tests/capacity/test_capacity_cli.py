"""`infersight capacity …` end to end through the command line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from capacity_standin import create_app, serve
from typer.testing import CliRunner

from infersight.cli import app
from infersight.cli.common import EXIT_CANNOT_JUDGE, EXIT_USAGE, CommandError
from infersight.safe_write import OutputError

runner = CliRunner()
# Triton user guide, "Optimization": inception_graphdef, basic config (see test_published_shapes)
PERF = (
    "Concurrency,Inferences/Second,p95 latency\n"
    "1,62.6,21371\n2,73.2,34381\n3,73.2,50298\n4,73.4,65569\n"
)
SEED = "batch,throughput,p99_ms\n" + "".join(
    f"{b},{100 * min(b, 32)},{10 + b}\n" for b in (1, 2, 4, 8, 16, 32, 64, 128)
)


def test_batch_writes_png_and_html_and_quotes_the_setting(tmp_path: Path) -> None:
    results = tmp_path / "r.csv"
    results.write_text(SEED)
    png, html = tmp_path / "knee.png", tmp_path / "knee.html"
    res = runner.invoke(
        app, ["capacity", "batch", str(results), "--png", str(png), "--html", str(html)]
    )
    assert res.exit_code == 0, res.output
    assert "max batch size 25 (range 24–28" in res.stdout and "seed §3.1" in res.stdout
    assert png.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    page = html.read_text()
    assert "<svg" in page and "data:image/png;base64," in page and "knee 32" in page


def test_batch_json_and_no_knee_exit(tmp_path: Path) -> None:
    results = tmp_path / "pa.csv"
    results.write_text(PERF)
    res = runner.invoke(app, ["capacity", "batch", str(results), "--json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert doc["advice"]["knee"]["x"] == 2 and doc["advice"]["setting"] == 1
    rising = tmp_path / "rising.csv"
    rising.write_text("batch,throughput\n1,10\n2,20\n4,40\n8,80\n")
    res = runner.invoke(app, ["capacity", "batch", str(rising)])
    assert res.exit_code == EXIT_CANNOT_JUDGE and "sweep further" in res.stdout


def test_batch_bad_file_is_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text("x,y\n1,2\n")
    res = runner.invoke(app, ["capacity", "batch", str(bad)])
    assert isinstance(res.exception, CommandError) and "none of the formats" in str(res.exception)


def test_concurrency_shows_each_figure_with_its_arithmetic() -> None:
    args = ["capacity", "concurrency", "--vram", "80GiB", "--per-batch-peak", "6GiB"]
    args += ["--batch-latency", "120ms", "--batch-size", "8", "--target-p99", "500ms", "--json"]
    res = runner.invoke(app, [*args, "--reserved", "16GiB"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert (doc["concurrent_batches"], doc["pool_size"], doc["queue_bound"]) == (8, 64, 202)
    figs = {f["name"]: f for f in doc["figures"]}
    assert (
        figs["concurrent batches (N = V/M)"]["arithmetic"] == "⌊48.00 GiB / 6.00 GiB⌋ = ⌊8.00⌋ → 8"
    )
    assert {f["seed"] for f in doc["figures"]} <= {"§3.2, §3.3", "§3.3"}
    res = runner.invoke(app, [*args[:-3], "--target-p99", "100ms"])
    assert isinstance(res.exception, CommandError) and res.exception.code == EXIT_USAGE
    assert "not above one batch's 120 ms" in str(res.exception)


@pytest.mark.slow
@pytest.mark.server
def test_sweep_writes_results_that_batch_reads(tmp_path: Path) -> None:
    out = tmp_path / "sweep.csv"
    with serve(create_app(base=0.06, knee=8, slots=4)) as url:
        res = runner.invoke(
            app,
            ["capacity", "sweep", url + "/v1/embeddings", "--batch", "1,2,4,8,16,32",
             "-o", str(out), "--step", "2s", "--warmup", "0.3s"],
        )  # fmt: skip
        assert res.exit_code == 0, res.output
        again = runner.invoke(
            app, ["capacity", "sweep", url + "/v1/embeddings", "--batch", "1,2,4", "-o", str(out)]
        )
        assert isinstance(again.exception, OutputError)  # RESULTS exists: never replaced unasked
        one = runner.invoke(
            app,
            [
                "capacity",
                "sweep",
                url + "/infer",
                "--batch",
                "1,2,4",
                "-o",
                str(tmp_path / "x.csv"),
            ],
        )
        assert isinstance(one.exception, CommandError) and "one item per request" in str(
            one.exception
        )
    assert out.read_text().startswith("batch,throughput,p50_ms")
    res = runner.invoke(app, ["capacity", "batch", str(out), "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["advice"]["knee"]["x"] in (4, 8, 16)


def test_batch_without_kneed_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "kneed", None)
    results = tmp_path / "r.csv"
    results.write_text(SEED)
    res = runner.invoke(app, ["capacity", "batch", str(results)])
    assert isinstance(res.exception, CommandError)
    assert "pip install 'infersight[capacity]'" in res.exception.message
