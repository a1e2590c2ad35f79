"""The simulator's fleet as Kubernetes runs it: the `kubernetes` dialect.

The engines are vLLM pods of a Deployment, one per GPU node; the cache and the vector DB are
StatefulSet pods on nodes of their own; dcgm-exporter and node_exporter are DaemonSet pods. The
series are what the Prometheus Operator and kube-state-metrics (v2) give for such a cluster:

* a pod's own target is scraped at its pod IP, and the ServiceMonitor adds `namespace`,
  `service`, `endpoint`, `pod` and `container`;
* dcgm-exporter keeps the node's name in `Hostname` and names the pod using each GPU (its
  pod mapping: `pod`, `namespace`, `container`); node_exporter's `instance` is relabelled to
  the node's name, as kube-prometheus does;
* kube-state-metrics describes every pod (`kube_pod_info` with its node, IP and controller),
  its readiness (not Ready while it loads, and while the balancer has it out of rotation: on
  Kubernetes that is a readiness probe failing), restarts and last termination reason, its
  image, the Deployment's replicas and generation, the nodes' conditions, and the engines'
  HorizontalPodAutoscaler with the pods it adds that no GPU node can take
  (`kubernetes_hpa.py`).

A restart the model crashed into is a container restart in the same pod; a planned one (a
rolling deploy) replaces the pod: a new ReplicaSet, name, IP and image, and the Deployment's
generation steps up when the rollout begins.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from infersight.lab.sim import kubernetes_hpa
from infersight.lab.sim.canonical import CACHE, VECTOR_DB
from infersight.lab.sim.drivers import FloatArray
from infersight.lab.sim.run import SimResult
from infersight.sources.raw import RawStore, labels_of

DIALECT = "kubernetes"
#: the engine the pods run: the scenarios that apply to vLLM apply here
ENGINE = "vllm"
NAMESPACE = "inference"
DEPLOYMENT = "vllm"
KSM_JOB, KSM_INSTANCE, KSM_NODE = "kube-state-metrics", "10.42.200.3:8080", "system-0"
#: the generated-name alphabet of Kubernetes (no vowels, no look-alike digits)
_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
#: a new rollout is a deploy with none in the window before it (its waves are one rollout)
ROLLOUT_GAP_S = 900.0
#: how long the pods the run begins with have been running
UPTIME_S = 7 * 86400.0


def _suffix(seed: str, n: int) -> str:
    digest = hashlib.sha256(seed.encode()).digest()
    return "".join(_ALPHABET[b % len(_ALPHABET)] for b in digest[:n])


def template_hash(revision: int) -> str:
    return _suffix(f"{DEPLOYMENT}/{revision}", 9)


def engine_pod(j: int, revision: int) -> str:
    return f"{DEPLOYMENT}-{template_hash(revision)}-{_suffix(f'{j}/{revision}', 5)}"


def _engine_ip(j: int, revision: int) -> str:
    return f"10.42.{j}.{20 + revision}"


def image(revision: int) -> str:
    return f"vllm/vllm-openai:v0.{9 + revision}.0"


class _Epochs:
    """Which pod revision each engine runs in each step: a planned restart at step t ends the
    old pod after that step's scrape; its replacement serves from t + 1."""

    def __init__(self, res: SimResult) -> None:
        deployed = res.trace.inst["deployed"] > 0
        self.rev: npt.NDArray[np.int64] = (np.cumsum(deployed, axis=0) - deployed).astype(
            np.int64
        )  # (n, m)
        self.crash: npt.NDArray[np.bool_] = (res.trace.inst["crash"] > 0) & ~deployed
        self.memkill: npt.NDArray[np.bool_] = res.trace.inst["memkill"] > 0
        self.alive: npt.NDArray[np.bool_] = res.trace.inst["alive"] > 0
        #: Ready: serving, and not taken out of the endpoints (a readiness probe failing)
        self.ready: npt.NDArray[np.bool_] = self.alive & (res.trace.inst["in_rotation"] > 0)
        self.t0: float = float(res.times[0])  # a window of a run starts later than its t0
        self.step: float = float(res.step)
        self.times: FloatArray = res.times
        self.m: int = deployed.shape[1]
        first = np.flatnonzero(deployed.any(axis=1))
        gap = int(ROLLOUT_GAP_S / self.step)
        starts = [t for k, t in enumerate(first) if k == 0 or t - first[k - 1] > gap]
        steps = np.arange(self.times.size)
        self.generation: FloatArray = 1.0 + np.searchsorted(np.asarray(starts), steps, "right")

    def index(self, ts: FloatArray) -> npt.NDArray[np.int64]:
        out: npt.NDArray[np.int64] = np.rint((ts - self.t0) / self.step).astype(np.int64)
        return out


def relabel(store: RawStore, res: SimResult, vector_db: str) -> RawStore:
    """The vLLM fleet's exporter samples as scraped in the cluster, and kube-state-metrics'."""
    ep = _Epochs(res)
    out = RawStore()
    for s in store:
        lb = s.label_map
        job, inst = lb.get("job", ""), lb.get("instance", "")
        host = inst.rsplit(":", 1)[0]
        if job in (ENGINE, "dcgm") and host.startswith("node-"):
            j = int(host.split("-", 1)[1])
            rev: npt.NDArray[np.int64] = ep.rev[ep.index(s.ts), j]
            for r in np.unique(rev):
                keep = rev == r
                pod = engine_pod(j, int(r))
                if job == ENGINE:
                    new = {**lb, "instance": f"{_engine_ip(j, int(r))}:8000", "pod": pod,
                           "namespace": NAMESPACE, "service": DEPLOYMENT, "endpoint": "http",
                           "container": "vllm", "job": DEPLOYMENT}  # fmt: skip
                else:
                    new = {**lb, "instance": f"10.42.{j}.5:9400", "pod": pod,
                           "namespace": NAMESPACE, "container": "vllm"}  # fmt: skip
                out.add_many(s.name, labels_of(new), s.ts[keep], s.values[keep])
            continue
        if job == "node":
            lb = {**lb, "pod": f"node-exporter-{_suffix(host, 5)}", "namespace": "monitoring"}
        elif job != "node" and host in (CACHE, VECTOR_DB):
            pod = f"{job}-0"
            lb = {**lb, "instance": f"{_dep_ip(host)}:{inst.rsplit(':', 1)[1]}", "pod": pod,
                  "namespace": "data", "service": job, "endpoint": "metrics"}  # fmt: skip
        out.add_many(s.name, labels_of(lb), s.ts, s.values)
    _state(out, res, ep, vector_db)
    return out


def _dep_ip(host: str) -> str:
    return "10.42.100.7" if host == CACHE else "10.42.101.7"


def _put(store: RawStore, ts: FloatArray, name: str, values: FloatArray, **labels: str) -> None:
    lb = {"job": KSM_JOB, "instance": KSM_INSTANCE, **labels}
    ok = np.isfinite(values)
    store.add_many(name, labels_of(lb), ts[ok], values[ok])


@dataclass(frozen=True)
class _Pod:
    node: str
    name: str
    namespace: str
    ip: str
    kind: str  # the controller: ReplicaSet, StatefulSet, DaemonSet
    owner: str
    image: str
    container: str


def _pod(store: RawStore, ts: FloatArray, p: _Pod, ready: FloatArray | None = None,
         restarts: FloatArray | None = None, new: bool = False,
         killed: FloatArray | None = None) -> None:  # fmt: skip
    """One pod's kube-state-metrics series over the steps `ts` it exists in: Ready throughout
    and never restarted unless said otherwise, started a week before unless `new`; `killed`:
    1 where the container's last termination was the kernel's kill at its memory limit."""
    one = np.ones(ts.size)
    ready = one if ready is None else ready
    restarts = np.zeros(ts.size) if restarts is None else restarts
    pl = {"namespace": p.namespace, "pod": p.name}
    _put(store, ts, "kube_pod_info", one, **pl, node=p.node, pod_ip=p.ip, host_ip="",
         created_by_kind=p.kind, created_by_name=p.owner, host_network="false")  # fmt: skip
    _put(store, ts, "kube_pod_status_phase", one, **pl, phase="Running")
    _put(store, ts, "kube_pod_status_ready", ready, **pl, condition="true")
    _put(store, ts, "kube_pod_status_ready", 1.0 - ready, **pl, condition="false")
    start = float(ts[0]) if new else float(ts[0]) - UPTIME_S
    _put(store, ts, "kube_pod_start_time", np.full(ts.size, start), **pl)
    c = {**pl, "container": p.container}
    digest = f"sha256:{_suffix(p.image, 12)}"
    _put(store, ts, "kube_pod_container_info", one, **c, image=p.image, image_id=digest)
    _put(store, ts, "kube_pod_container_status_restarts_total", restarts, **c)
    # kube-state-metrics has a last-terminated series only once the container has terminated,
    # labelled with that termination's reason
    oom = np.zeros(ts.size) if killed is None else killed
    for reason, on in (
        ("OOMKilled", (restarts > 0) & (oom > 0)),
        ("Error", (restarts > 0) & (oom <= 0)),
    ):
        last = np.where(on, 1.0, np.nan)
        _put(store, ts, "kube_pod_container_status_last_terminated_reason", last, **c,
             reason=reason)  # fmt: skip


def _state(store: RawStore, res: SimResult, ep: _Epochs, vector_db: str) -> None:
    ts = res.times
    for j in range(ep.m):
        node = f"node-{j}"
        for r in (int(x) for x in np.unique(ep.rev[:, j])):
            at: npt.NDArray[np.bool_] = ep.rev[:, j] == r
            crashes = np.cumsum(ep.crash[:, j] & at)[at]
            # a crashed container restarts: its count rises the step after it went down
            restarts = np.concatenate([[0.0], crashes[:-1]]).astype(np.float64)
            rs = f"{DEPLOYMENT}-{template_hash(r)}"
            pod = _Pod(node, engine_pod(j, r), NAMESPACE, _engine_ip(j, r), "ReplicaSet", rs,
                       image(r), "vllm")  # fmt: skip
            # the reason of the last termination: the kill at the memory limit, or a crash
            ends = np.flatnonzero(ep.crash[:, j] & at)
            killed = np.zeros(ts.size)
            for k, a in enumerate(ends):
                b = ends[k + 1] if k + 1 < ends.size else ts.size
                killed[a + 1 : b + 1] = float(ep.memkill[a, j])
            _pod(store, ts[at], pod, ep.ready[at, j] * 1.0, restarts, new=r > 0,
                 killed=killed[at])  # fmt: skip
        dcgm = _Pod(node, f"dcgm-exporter-{_suffix('dcgm' + node, 5)}", "monitoring",
                    f"10.42.{j}.5", "DaemonSet", "dcgm-exporter", "dcgm-exporter:4.5.3",
                    "dcgm-exporter")  # fmt: skip
        _pod(store, ts, dcgm)
    for host, job in ((CACHE, "redis"), (VECTOR_DB, vector_db)):
        dep = _Pod(host, f"{job}-0", "data", _dep_ip(host), "StatefulSet", job, f"{job}:stable",
                   job)  # fmt: skip
        _pod(store, ts, dep)
    ksm_ip = KSM_INSTANCE.split(":")[0]
    ksm = _Pod(KSM_NODE, "kube-state-metrics-0", "monitoring", ksm_ip, "StatefulSet",
               KSM_JOB, "kube-state-metrics:v2.19.1", KSM_JOB)  # fmt: skip
    _pod(store, ts, ksm)
    store.add_many(
        "up", labels_of({"job": KSM_JOB, "instance": KSM_INSTANCE}), ts, np.ones(ts.size)
    )
    desired, limited = kubernetes_hpa.desired_replicas(res, ep.m)
    _deployment(store, ts, ep, desired)
    _autoscaler(store, ts, ep.m, desired, limited)
    _pending(store, ts, ep, desired)
    for node in [f"node-{j}" for j in range(ep.m)] + [CACHE, VECTOR_DB, KSM_NODE]:
        for status, v in (("true", 1.0), ("false", 0.0), ("unknown", 0.0)):
            _put(store, ts, "kube_node_status_condition", np.full(ts.size, v), node=node,
                 condition="Ready", status=status)  # fmt: skip


def _deployment(store: RawStore, ts: FloatArray, ep: _Epochs, desired: FloatArray) -> None:
    """The Deployment, its replicas set by the autoscaler: what it adds past the fleet's GPU
    nodes is unavailable (Pending)."""
    available = ep.ready.sum(axis=1).astype(np.float64)
    newest = ep.rev == ep.rev.max(axis=1, keepdims=True)
    updated: FloatArray = newest.sum(axis=1).astype(np.float64)
    d = {"namespace": NAMESPACE, "deployment": DEPLOYMENT}
    _put(store, ts, "kube_deployment_spec_replicas", desired, **d)
    _put(store, ts, "kube_deployment_status_replicas_available", available, **d)
    _put(store, ts, "kube_deployment_status_replicas_unavailable", desired - available, **d)
    _put(store, ts, "kube_deployment_status_replicas_updated", updated, **d)
    _put(store, ts, "kube_deployment_metadata_generation", ep.generation, **d)
    _put(store, ts, "kube_deployment_status_observed_generation", ep.generation, **d)


def _autoscaler(store: RawStore, ts: FloatArray, m: int, desired: FloatArray,
                limited: FloatArray) -> None:  # fmt: skip
    h = {"namespace": NAMESPACE, "horizontalpodautoscaler": DEPLOYMENT}
    _put(store, ts, "kube_horizontalpodautoscaler_spec_min_replicas", np.full(ts.size, m), **h)
    top = np.full(ts.size, float(m + kubernetes_hpa.EXTRA))
    _put(store, ts, "kube_horizontalpodautoscaler_spec_max_replicas", top, **h)
    _put(store, ts, "kube_horizontalpodautoscaler_status_desired_replicas", desired, **h)
    _put(store, ts, "kube_horizontalpodautoscaler_status_current_replicas", desired, **h)
    for status, v in (("true", limited), ("false", 1.0 - limited)):
        _put(store, ts, "kube_horizontalpodautoscaler_status_condition", v, **h,
             condition="ScalingLimited", status=status)  # fmt: skip


def _pending(store: RawStore, ts: FloatArray, ep: _Epochs, desired: FloatArray) -> None:
    """The replicas the autoscaler adds past the fleet: created, never scheduled (every GPU node
    holds its one engine), each run of steps a pod of its own until it is scaled away."""
    newest = ep.rev.max(axis=1)
    for k in range(ep.m, ep.m + kubernetes_hpa.EXTRA):
        exists = desired > k
        edges = np.flatnonzero(np.diff(np.concatenate([[0], exists.astype(np.int8), [0]])))
        for a, b in zip(edges[::2], edges[1::2], strict=True):
            r = int(newest[a])
            name = f"{DEPLOYMENT}-{template_hash(r)}-{_suffix(f'{k}/{r}/{a}', 5)}"
            pl = {"namespace": NAMESPACE, "pod": name}
            at, one = ts[a:b], np.ones(b - a)
            _put(store, at, "kube_pod_info", one, **pl, node="", pod_ip="", host_ip="",
                 created_by_kind="ReplicaSet", created_by_name=f"{DEPLOYMENT}-{template_hash(r)}",
                 host_network="false")  # fmt: skip
            _put(store, at, "kube_pod_status_phase", one, **pl, phase="Pending")
            _put(store, at, "kube_pod_status_unschedulable", one, **pl)
            _put(store, at, "kube_pod_status_ready", one, **pl, condition="false")
            _put(store, at, "kube_pod_status_ready", 0 * one, **pl, condition="true")
