import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from infersight.cli import app
from infersight.signals import all_signals

runner = CliRunner()


def test_signals_json_lists_every_signal_with_its_exporters() -> None:
    res = runner.invoke(app, ["signals", "--json"])
    assert res.exit_code == 0, res.output
    rows = json.loads(res.stdout)
    assert [r["name"] for r in rows] == list(all_signals())
    gpu = next(r for r in rows if r["name"] == "inference.gpu_util")
    assert {"dcgm", "triton"} <= set(gpu["exporters"])


def test_signals_filter_by_layer_and_exporter_with_promql() -> None:
    res = runner.invoke(app, ["signals", "--json", "-l", "dependency", "-e", "milvus", "--promql"])
    rows = json.loads(res.stdout)
    assert {r["name"] for r in rows} == {
        "dependency.vector_query_p99",
        "dependency.vector_queue_wait_p99",
        "dependency.retrieval_request_rate",
    }
    assert "/ 1000" in rows[0]["promql"][0]["expr"]  # Milvus ms → s at the edge


@pytest.mark.slow
def test_signals_promql_piped_prints_each_expression_whole_on_its_line() -> None:
    """`signals --promql` piped wrapped PromQL inside a table cell, where it cannot be copied
    (issue 39): piped, or with --plain, each expression is a line of its own, as written."""
    rows = json.loads(runner.invoke(app, ["signals", "-e", "vllm", "--promql", "--json"]).stdout)
    exprs = [p["expr"] for r in rows for p in r["promql"]]
    assert any(len(e) > 80 for e in exprs)  # wider than a terminal's table cell
    piped = subprocess.run(
        [sys.executable, "-c", "from infersight.cli import main; main()", "signals", "-e", "vllm",
         "--promql"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert piped.returncode == 0, piped.stderr
    lines = piped.stdout.splitlines()
    assert [ln.removeprefix("  vllm: ") for ln in lines if ln.startswith("  vllm: ")] == exprs
    assert "│" not in piped.stdout and "┃" not in piped.stdout
    asked = runner.invoke(app, ["signals", "-e", "vllm", "--promql", "--plain"])
    assert asked.exit_code == 0 and asked.stdout == piped.stdout


def test_exporters_table_and_json() -> None:
    res = runner.invoke(app, ["exporters", "--json"])
    fams = {r["family"] for r in json.loads(res.stdout)}
    assert {"vllm", "triton", "tgi", "dcgm", "node", "redis", "milvus", "qdrant"} <= fams
    assert runner.invoke(app, ["exporters"]).exit_code == 0


@pytest.mark.slow
def test_usage_errors_are_one_line_and_exit_2() -> None:
    """Run the installed entry point, so the one-line error handler is exercised too."""
    res = subprocess.run(
        [sys.executable, "-c", "from infersight.cli import main; main()", "signals", "-e", "nope"],
        capture_output=True,
        text=True,
    )
    assert res.returncode == 2
    assert res.stderr.strip().count("\n") == 0
    assert "unknown exporter family 'nope'" in res.stderr


@pytest.mark.slow
def test_bad_mapping_folder_is_named(tmp_path: object) -> None:
    res = subprocess.run(
        [
            sys.executable,
            "-c",
            "from infersight.cli import main; main()",
            "signals",
            "--mappings",
            "/nonexistent-dir",
        ],
        capture_output=True,
        text=True,
    )
    assert res.returncode == 3  # an input error
    assert "/nonexistent-dir: not a directory" in res.stderr
    assert "Traceback" not in res.stderr


def test_json_output_is_strict_json() -> None:
    """NaN is not JSON: an undefined figure is null."""
    import contextlib
    import io

    from infersight.cli.common import print_json

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        print_json({"rate": float("nan"), "rows": [float("inf"), 1.0]})
    assert json.loads(buf.getvalue()) == {"rate": None, "rows": [None, 1.0]}


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", "from infersight.cli import main; main()", *args],
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.slow
def test_bad_windows_fail_before_any_query(tmp_path: Path) -> None:
    """A typo in --step or --at costs one line and no HTTP request (port 9 answers nothing)."""
    url, out = "http://127.0.0.1:9", str(tmp_path / "b.tar.gz")
    cases = {
        ("--window", "1m", "--step", "1h"): "not shorter than the window",
        ("--window", "1h", "--step", "1ms"): "too many",
        ("--at", "2099-01-01"): "is in the future",
    }
    for extra, expected in cases.items():
        res = _run("pull", "-p", url, "-o", out, *extra)
        assert res.returncode == 2, (extra, res.stderr)
        assert expected in res.stderr and res.stderr.strip().count("\n") == 0
    assert not (tmp_path / "b.tar.gz").exists()


@pytest.mark.slow
def test_overwrite_never_deletes_a_folder_of_other_files(tmp_path: Path) -> None:
    precious = tmp_path / "precious"
    precious.mkdir()
    (precious / "notes.txt").write_text("keep me")
    res = _run("pull", "-p", "http://127.0.0.1:9", "-o", str(precious), "--overwrite")
    assert res.returncode == 2 and "not an infersight bundle" in res.stderr
    assert (precious / "notes.txt").read_text() == "keep me"


@pytest.mark.slow
def test_import_of_a_directory_says_so(tmp_path: Path) -> None:
    res = _run("bundle", "import", str(tmp_path), "-o", str(tmp_path / "x.tar.gz"))
    assert res.returncode == 2 and "is a directory" in res.stderr


@pytest.mark.slow
def test_at_outside_the_bundle_window_is_refused(tmp_path: Path) -> None:
    import numpy as np

    from infersight.bundle import write_bundle
    from infersight.frame import MetricFrame, SignalSeries

    frame = MetricFrame(
        1_700_000_000.0, 15.0, 5, {"service.queue_length": SignalSeries(("a",), np.ones((1, 5)))}
    )
    bundle = write_bundle(tmp_path / "b.tar.gz", {"incident": frame}, {"kind": "test"})
    for command in ("detect", "diagnose"):
        res = _run(command, str(bundle), "--at", "2099-01-01")
        assert res.returncode == 2 and "lies outside the bundle's window" in res.stderr
