"""On the simulator's Kubernetes dialect: a rollout that reloads every replica's model from
remote storage is named as the cold start it is, with the pods, nodes and workload, and the
rollout is quoted under it; replicas killed at their memory limit are named with the reason
kube-state-metrics records; pods out of the endpoints with their readiness; a surge with the
autoscaler at its ceiling and the pods it could not place; a day of routine rollouts and
autoscaler steps gives no root."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
from typer.testing import CliRunner

from infersight.cli import app
from infersight.cli.common import EXIT_FINDINGS
from infersight.diagnose import diagnose
from infersight.kube.read import from_store
from infersight.lab.evaluate.scenario_windows import alert_time, healthy_times, windows_at
from infersight.lab.sim.kubernetes_hpa import desired_replicas
from infersight.lab.sim.outputs import write_sim_bundle
from infersight.lab.sim.run import BASE_START, simulate
from infersight.report.firstscreen import first_screen
from infersight.report.view import build_view
from infersight.sources.local import pods_of

runner = CliRunner()


def test_a_cold_rollout_is_named_with_its_pods_and_the_rollout(tmp_path: Path) -> None:
    res = simulate("model_cold_start", hours=26, instances=4, seed=1, step=60.0)
    bundle = write_sim_bundle(res, tmp_path / "rollout.tar.gz", "kubernetes")
    out = runner.invoke(app, ["diagnose", str(bundle), "--format", "json"])
    assert out.exit_code == EXIT_FINDINGS, out.output
    doc = json.loads(out.output)
    assert doc["root_causes"][0]["hypothesis"] == "model_cold_start"
    kinds = {c["kind"] for c in doc["cluster_changes"]}
    assert {"rollout", "image", "not_ready"} <= kinds
    rollout = next(c for c in doc["cluster_changes"] if c["kind"] == "rollout")
    assert rollout["subject"] == "Deployment inference/vllm"
    assert rollout["nodes"] == ["node-0", "node-1", "node-2", "node-3"]
    assert doc["pods"] and {p["workload"] for p in doc["pods"].values()} >= {"Deployment/vllm"}
    short = runner.invoke(app, ["diagnose", str(bundle)]).output
    assert "pods: Deployment/vllm on node-0" in short
    assert "changed there: Deployment inference/vllm: generation 1 → 2" in short
    full = runner.invoke(app, ["diagnose", str(bundle), "-v"]).output
    assert "Pods: Deployment/vllm on node-0" in full
    assert "What changed in the cluster" in full


def test_routine_rollouts_are_no_incident() -> None:
    res = simulate("healthy_rollouts", hours=26, instances=6, seed=1, step=60.0)
    raw = res.raw("kubernetes")
    for at in healthy_times(res, 2):
        dx = diagnose(windows_at(res, "kubernetes", at, raw))
        assert not dx.root_causes, [r.hypothesis for r in dx.root_causes]
        assert dx.healthy, dx.summary


def test_an_oom_killed_replica_is_named_with_its_reason() -> None:
    """seed §3.2 on Kubernetes: the container's last termination says OOMKilled, and the
    finding quotes it on the node where it happened."""
    res = simulate("memory_limit_oom", hours=26, instances=4, seed=1, step=60.0)
    raw = res.raw("kubernetes")
    at = alert_time(res)
    dx = diagnose(windows_at(res, "kubernetes", at, raw))
    assert dx.root_causes[0].hypothesis == "memory_limit_oom"
    h = dx.hypothesis("memory_limit_oom")
    assert h is not None and "service.oom_kills" in {e.signal for e in h.evidence if e.supports}
    pods = pods_of(raw, at - 3600, at)
    changes = from_store(raw, at - 3600, at, 60.0, pods)
    killed = [c for c in changes if c.kind == "restart" and "OOMKilled" in c.what]
    assert killed and set(killed[0].nodes) <= set(h.instances)
    d = replace(dx, cluster_changes=tuple(changes), pods=pods.to_dict())
    root = first_screen(d).roots[0]
    assert "Deployment/vllm" in root.pods
    assert any("OOMKilled" in line for line in root.cluster)


def test_pods_out_of_the_endpoints_are_named_with_their_readiness() -> None:
    """seed §2.3 on Kubernetes: the replicas taken out of rotation are pods whose readiness
    failed; the finding names the removal, and the not-Ready pods are what changed there."""
    res = simulate("lb_instance_removed", hours=26, instances=6, seed=0, step=60.0)
    raw = res.raw("kubernetes")
    at = alert_time(res)
    dx = diagnose(windows_at(res, "kubernetes", at, raw))
    assert dx.root_causes[0].hypothesis == "lb_instance_removed", dx.root_causes
    h = dx.hypothesis("lb_instance_removed")
    assert h is not None
    removed = set(res.truth.instances)
    assert removed <= set(h.instances)
    pods = pods_of(raw, at - 3600, at)
    changes = from_store(raw, at - 3600, at, 60.0, pods)
    not_ready = [c for c in changes if c.kind == "not_ready"]
    assert {node for c in not_ready for node in c.nodes} == removed
    d = replace(dx, cluster_changes=tuple(changes), pods=pods.to_dict())
    root = first_screen(d).roots[0]
    assert any("not Ready" in line for line in root.cluster), root.cluster
    # the scope in pods (seed §2.3): the workload, on how many of its nodes
    scope = {i.label: i.value for i in build_view(d).scope}
    bad = len(d.scope["anomalous_instances"])
    assert scope["Pods"] == f"Deployment/vllm on {bad} of its 6 node(s) ({bad} pod(s))"


def test_a_surge_past_the_autoscalers_ceiling_is_quoted_under_the_surge() -> None:
    """The HPA asks for more replicas than the GPU nodes hold: it reaches its maximum and the
    pods it adds wait Pending. Those are the surge's context, quoted under it: why capacity
    did not follow the load."""
    res = simulate("traffic_surge", hours=26, instances=6, seed=0, step=60.0)
    raw = res.raw("kubernetes")
    at = alert_time(res)
    dx = diagnose(windows_at(res, "kubernetes", at, raw))
    assert dx.root_causes[0].hypothesis == "traffic_surge", dx.root_causes
    pods = pods_of(raw, at - 3600, at)
    changes = from_store(raw, at - 3600, at, 60.0, pods)
    d = replace(dx, cluster_changes=tuple(changes), pods=pods.to_dict())
    lines = first_screen(d).roots[0].cluster
    assert any("at its maximum of 8 replicas" in line for line in lines), lines
    assert any("pods of Deployment/vllm: Pending: no node can schedule it" in x for x in lines)


def test_a_normal_day_has_autoscaler_steps_and_no_root() -> None:
    # the busiest normal hours ask for a replica more: steps, and a pod Pending for a while
    # started ten hours earlier than the suite's runs, so that its last hours are the busiest
    # of the day and have a day before them to compare with
    start = BASE_START - 10 * 3600
    res = simulate("healthy_rollouts", hours=26, instances=6, seed=1, step=60.0, start=start)
    desired, _limited = desired_replicas(res, 6)
    assert set(np.unique(desired)) >= {6.0, 7.0}
    raw = res.raw("kubernetes")
    steps = [t for t in res.times[1:][np.diff(desired) != 0] if t > res.times[0] + 86400]
    assert steps, "no autoscaler step in the last hours"
    at = float(steps[0]) + 600
    dx = diagnose(windows_at(res, "kubernetes", at, raw))
    assert not dx.root_causes, [r.hypothesis for r in dx.root_causes]
    changes = from_store(raw, at - 3600, at, 60.0, pods_of(raw, at - 3600, at))
    assert any(c.kind == "scaling" for c in changes)
