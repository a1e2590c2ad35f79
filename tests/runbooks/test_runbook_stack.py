"""The bar: the runbook chosen for a removed replica behind ingress-nginx on Kubernetes drives
kubectl, not HAProxy's stats form, the reports and the CLI say which stack they assumed and
why, and its dry run with a failing precondition (no kubectl, or no cluster) exits non-zero."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest

from infersight.diagnose import Diagnosis, diagnose
from infersight.lab.evaluate.scenario_windows import alert_time, windows_at
from infersight.lab.sim import simulate
from infersight.report import render
from infersight.runbooks import load_library
from infersight.runbooks.choose import choose, for_diagnosis, variants
from infersight.runbooks.stack import Stack, detect, from_source, parse_stack
from servers import FakeServer, Reply, Request, ok

SRC = Path(__file__).resolve().parents[2] / "src"
#: the exporters found on the issue's server
ISSUE_FAMILIES = "vllm,ingress_nginx,redis,qdrant,dcgm,node"
PARAMS = ["-P", "deployment=llm", "-P", "service=llm", "-P", "ingress=llm"]


def _kinds(book_id: str) -> set[str]:
    book = load_library().get(book_id)
    assert book is not None
    return {s.kind for s in [*book.steps, *book.rollback]}


@cache
def _removed_replica() -> Diagnosis:
    """A replica dropped from the load balancer while up, diagnosed as a user would."""
    res = simulate("lb_instance_removed", hours=26, instances=6, seed=0, step=60.0)
    return diagnose(windows_at(res, "native", alert_time(res)), source={"kind": "simulator"})


def _on_stack(d: Diagnosis, families: str) -> Diagnosis:
    return dataclasses.replace(d, source={"kind": "prometheus", "families": families})


def test_the_stack_is_read_from_the_exporters_found() -> None:
    stack = from_source({"families": ISSUE_FAMILIES})
    assert stack.parts == {"kubernetes", "ingress-nginx"}
    assert "ingress-nginx is Kubernetes' ingress controller" in stack.describe()
    assert detect(["vllm", "haproxy"]).parts == {"haproxy"}
    assert detect(["vllm"], ["kube_pod_info", "vllm:num_requests_waiting"]).parts == {"kubernetes"}
    assert not from_source({"kind": "simulator", "dialect": "vllm"}).known
    assert "records no exporter families" in from_source({"kind": "x"}).describe()


def test_a_removed_replica_behind_ingress_nginx_on_kubernetes_gets_kubectl() -> None:
    lib = load_library()
    assert len(variants(lib, "lb-restore-endpoints")) == 3
    chosen = choose(lib, "lb-restore-endpoints", from_source({"families": ISSUE_FAMILIES}))
    assert chosen.id == "lb-restore-endpoints-ingress-nginx"
    assert _kinds(chosen.id) == {"kubectl"}  # no HTTP to a stats form
    verbs = {s.kubectl.action for s in chosen.book.steps if s.kubectl}  # type: ignore[union-attr]
    assert {"scale", "rollout-status", "get"} <= verbs
    haproxy = choose(lib, "lb-restore-endpoints", detect(["haproxy", "vllm"]))
    assert haproxy.id == "lb-restore-endpoints-haproxy" and _kinds(haproxy.id) == {"http"}
    bare = choose(lib, "lb-restore-endpoints", parse_stack("kubernetes"))
    assert bare.id == "lb-restore-endpoints-kubernetes"
    unknown = choose(lib, "lb-restore-endpoints", Stack(frozenset()))
    assert unknown.book is None and "the stack was not detected" in unknown.note()


@pytest.mark.slow
def test_every_report_names_the_kubectl_runbook_and_the_stack_assumed() -> None:
    d = _removed_replica()
    hyp = d.hypothesis("lb_instance_removed")
    assert hyp is not None and hyp.verdict == "confirmed"
    assert hyp.runbook == "lb-restore-endpoints"  # what the rule names: the remedy
    d = _on_stack(d, ISSUE_FAMILIES)
    for fmt in ("md", "text", "brief", "json", "html"):
        out = render(d, fmt)
        assert "lb-restore-endpoints-ingress-nginx" in out, fmt
        assert "lb-restore-endpoints-haproxy" not in out, fmt
        assert "kubernetes + ingress-nginx" in out, fmt
    doc = json.loads(render(d, "json"))
    rb = {h["id"]: h["runbook"] for h in doc["hypotheses"]}
    assert rb["lb_instance_removed"] == "lb-restore-endpoints-ingress-nginx"
    why = "(from the exporters found: ingress_nginx metrics; ingress-nginx is Kubernetes'"
    assert why in doc["source"]["runbook_stack"]
    for fmt in ("brief", "md", "text"):  # the first screen says it beside the runbook
        out = render(d, fmt)
        assert "from the exporters found" in out and "is Kubernetes' ingress controller" in out
    assert for_diagnosis(for_diagnosis(d)) == for_diagnosis(d)
    lab = render(_on_stack(_removed_replica(), "vllm,haproxy,redis"), "md")
    assert "lb-restore-endpoints-haproxy" in lab


def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "infersight", "runbook", *args],
        capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
        env={**os.environ, "PYTHONPATH": str(SRC), "COLUMNS": "200", **(env or {})},
    )  # fmt: skip


@pytest.mark.slow
def test_the_dry_run_drives_kubectl_and_exits_1_without_a_cluster(no_cluster: Path) -> None:
    res = cli("run", "lb-restore-endpoints", "--stack", "kubernetes,ingress-nginx", *PARAMS)
    assert res.returncode == 1, res.stdout + res.stderr
    out = res.stdout
    assert out.startswith("lb-restore-endpoints-ingress-nginx: dry run")
    assert "stack kubernetes + ingress-nginx (given with --stack)" in out
    assert "would run (kubectl)" in out
    assert "kubectl --namespace default scale deployment/llm" in out
    assert "stats" not in out.lower() and "haproxy" not in out.lower()
    pre = next(ln for ln in out.splitlines() if ln.startswith("precondition the cluster answers"))
    assert "fails (kubectl: " in pre and "kubectl --namespace default get ingress/llm" in pre
    assert "a real run would be refused: precondition" in out


@pytest.mark.slow
def test_with_no_kubectl_at_all_the_precondition_fails_in_one_clear_line(tmp_path: Path) -> None:
    res = cli(
        "run", "lb-restore-endpoints", "--stack", "kubernetes,ingress-nginx", *PARAMS,
        "--format", "json", env={"PATH": str(tmp_path)},
    )  # fmt: skip
    assert res.returncode == 1, res.stderr
    report = json.loads(res.stdout)
    assert report["runbook"] == "lb-restore-endpoints-ingress-nginx"
    assert report["outcome"] == "refused" and report["missing_binaries"] == ["kubectl"]
    first = report["preconditions"][0]
    assert first["verdict"] == "fails"
    assert first["detail"] == "kubectl is not installed here (not on PATH): no cluster can be asked"
    assert report["stack"].startswith("stack kubernetes + ingress-nginx")


def _names(names: list[str]) -> object:
    def handler(req: Request) -> Reply:
        return ok(names)

    return handler


@pytest.mark.slow
def test_the_stack_is_detected_on_prometheus_and_a_remedy_needs_one(no_cluster: Path) -> None:
    names = ["nginx_ingress_controller_requests", "vllm:num_requests_waiting", "up"]
    with FakeServer(_names(names)) as fake:  # type: ignore[arg-type]
        res = cli("run", "lb-restore-endpoints", "-p", fake.url, *PARAMS)
    assert res.returncode == 1, res.stderr
    assert f"stack kubernetes + ingress-nginx (from the exporters on {fake.url}" in res.stdout
    assert "kubectl" in res.stdout and "haproxy" not in res.stdout.lower()
    none = cli("run", "lb-restore-endpoints", *PARAMS)
    lines = [ln for ln in none.stderr.splitlines() if ln.strip()]
    assert none.returncode == 2 and len(lines) == 1, none.stderr
    assert "lb-restore-endpoints-haproxy (haproxy)" in lines[0] and "--stack" in lines[0]
    bad = cli("run", "lb-restore-endpoints", "--stack", "openshift", *PARAMS)
    assert bad.returncode == 2 and "--stack openshift: name parts among" in bad.stderr
