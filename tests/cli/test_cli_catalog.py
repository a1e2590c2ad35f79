import json
import subprocess
import sys

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
    }
    assert "/ 1000" in rows[0]["promql"][0]["expr"]  # Milvus ms → s at the edge


def test_exporters_table_and_json() -> None:
    res = runner.invoke(app, ["exporters", "--json"])
    fams = {r["family"] for r in json.loads(res.stdout)}
    assert {"vllm", "triton", "tgi", "dcgm", "node", "redis", "milvus", "qdrant"} <= fams
    assert runner.invoke(app, ["exporters"]).exit_code == 0


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
    assert res.returncode == 1
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
