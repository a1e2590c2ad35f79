"""A request path declared in a file (`diagnose --path-file`, serve's `path_file`): edges the
metrics cannot show change where the walk ends, and a file that cannot be used is refused in
one line naming the entry."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from infersight.bundle import write_bundle
from infersight.cli import app
from infersight.cli.common import EXIT_USAGE, CommandError
from infersight.diagnose import TopologyError, load_topology
from infersight.diagnose.path.topology import parse_topology
from infersight.diagnose.path.world import build_world
from infersight.lab.evaluate.path_cases import _case
from infersight.serve.config import ConfigError, ServeConfig

#: an API and a reranker, both serving without a model: the roles alone make both fronts the
#: gateway calls, so the API's slowdown is a change of its own, grouped with the reranker's
CASE = yaml.safe_load(
    """
name: the API waits on a reranker the metrics do not place
base:
  service.e2e_latency_avg: {api-0: 0.30, rerank-0: 0.05}
  service.request_rate: {api-0: 40, rerank-0: 40}
change:
  service.e2e_latency_avg: {rerank-0: {ramp: [0.05, 0.5, 8]}, api-0: {ramp: [0.30, 0.75, 8]}}
  access.request_latency_p99: {gateway: {ramp: [0.38, 0.85, 8]}}
  access.upstream_latency_p99: {gateway: {ramp: [0.37, 0.84, 8]}}
path:
  calls: [[service:api-*, service:rerank-0]]
expect: {node: service:rerank-0}
"""
)
PATH_TEXT = "calls:\n  - [service:api-*, service:rerank-0]\n"


def test_a_declared_call_ends_the_walk_at_the_callee() -> None:
    case = _case("walk", CASE)
    declared = case.diagnose().root_causes[0]
    assert declared.nodes == ("service:rerank-0",)
    # the same windows without the file: the API's own slowdown is a root beside it
    guessed = dataclasses.replace(case, topology=None).diagnose().root_causes[0]
    assert "service:api-0" in guessed.nodes


def test_patterns_stand_for_the_instances_present_and_literals_are_added() -> None:
    windows = _case("walk", CASE).windows()
    edges = parse_topology(
        {"calls": [["service:api-*", "service:rerank-0"], ["service:none-*", "cache:redis-0"]],
         "runs_on": [["service:rerank-0", "host:rr-host"]]}
    ).edges  # fmt: skip
    w = build_world(windows["incident"], edges)
    assert "service:rerank-0" in w.calls["service:api-0"]
    assert "host:rr-host" in w.nodes and "host:rr-host" in w.runs_on["service:rerank-0"]
    assert not any(n.startswith("service:none") for n in w.nodes)


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("calls: [[service:a]]\n", "calls[0]: expected a pair [FROM, TO]"),
        ("calls: [[service:a, reranker:r]]\n", "'reranker' is no part of the path"),
        ("calls: [[service:a, redis-0]]\n", "'redis-0' is no node: write PART:INSTANCE"),
        ("calls: [[service:a, service:a]]\n", "cannot send work to itself"),
        ("edges: []\n", "unknown key 'edges'; the kinds of edge are calls, misses, runs_on"),
        ("calls: service:a\n", "calls: expected a list of [FROM, TO] pairs"),
        ("calls: [[a\n", "not valid YAML (line 2)"),
        ("- calls\n", "expected keys calls, misses, runs_on"),
    ],
)
def test_a_path_file_that_cannot_be_used_says_where(tmp_path: Path, text: str, says: str) -> None:
    f = tmp_path / "path.yaml"
    f.write_text(text)
    with pytest.raises(TopologyError, match=r"path\.yaml") as err:
        load_topology(f)
    assert says in str(err.value) and "\n" not in str(err.value)


def test_diagnose_reads_the_path_file_and_refuses_a_bad_one(tmp_path: Path) -> None:
    bundle = write_bundle(tmp_path / "b.tar.gz", _case("walk", CASE).windows(), {"kind": "t"})
    good, bad = tmp_path / "path.yaml", tmp_path / "bad.yaml"
    good.write_text(PATH_TEXT)
    bad.write_text("calls: [[service:a, gpu]]\n")
    runner = CliRunner()
    res = runner.invoke(app, ["diagnose", str(bundle), "--path-file", str(good), "--json"])
    assert res.exit_code == 1, res.output
    assert '"nodes": [\n        "service:rerank-0"\n      ]' in res.stdout
    assert json.loads(res.stdout)["source"]["path_file"] == str(good)  # the report says so
    for path, says in ((bad, "'gpu' is no node"), (tmp_path / "no", "path file")):
        res = runner.invoke(app, ["diagnose", str(bundle), "--path-file", str(path)])
        err = res.exception
        assert isinstance(err, CommandError) and err.code == EXIT_USAGE
        assert err.message.startswith("--path-file: ") and says in err.message


def test_serve_reads_its_path_file_at_start(tmp_path: Path) -> None:
    f = tmp_path / "path.yaml"
    f.write_text(PATH_TEXT)
    cfg = ServeConfig.model_validate({"path_file": str(f), "auth": {"disabled": True}})
    topology = cfg.topology()
    assert topology is not None and topology.edges == (
        ("calls", "service:api-*", "service:rerank-0"),
    )
    f.write_text("misses: [[cache:a]]\n")
    with pytest.raises(ConfigError, match=r"^path_file: .*misses\[0\]"):
        cfg.topology()
