"""Which pod runs on which node, from kube-state-metrics' `kube_pod_info`.

The project reads a machine as one identity (`identity.py`): an engine, its GPU and its host
meet on the node's name. On Kubernetes the engine is scraped at its pod's IP
(`instance="10.4.2.17:8000"`, with `pod="vllm-5d8f7c9b4-x2k9q"` from the ServiceMonitor),
dcgm-exporter names its node (`Hostname`) and the pod using each GPU (`pod`), and
kube-state-metrics' own series carry the `pod` they describe while their `instance` is
kube-state-metrics itself. `kube_pod_info` (`pod`, `namespace`, `node`, `pod_ip`,
`created_by_kind`, `created_by_name`, `host_network`) joins them: a series of a known pod is
read on that pod's node, and one scraped at a known pod's IP likewise.

Pods of one node are read as one machine, as processes of one host are: a node's pods keep one
identity across a rollout (new pod names, new IPs), so the day before is still comparable.
Reports name the pods and their workloads beside the node (`PodMap.on_node`).

kube-state-metrics must be scraped with its own labels kept (`honorLabels: true`, as
kube-prometheus does); otherwise its `pod` label arrives as `exported_pod`, which is read too.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from infersight.identity import host_of, resolve

#: the series that places pods on nodes, and the labels of it that are read
POD_INFO = "kube_pod_info"
#: how long before a window a pod that ended is still placed: its samples stay inside the
#: catalog's longest range (15 min) and the lookback of an instant selector (5 min) for that
#: long, and must not be read as a machine of their own
PLACED_BEFORE_S = 1800.0
POD_INFO_LABELS = (
    "namespace", "pod", "node", "pod_ip", "host_network", "created_by_kind", "created_by_name",
)  # fmt: skip
#: a ReplicaSet made by a Deployment is named `<deployment>-<pod-template-hash>`; the hash is
#: written in the alphabet Kubernetes uses for generated names (k8s.io/apimachinery rand)
_TEMPLATE_HASH = re.compile(r"^(?P<base>.+)-[bcdfghjklmnpqrstvwxz2456789]{5,10}$")


@dataclass(frozen=True)
class Pod:
    namespace: str
    name: str
    node: str
    ip: str = ""
    #: `Deployment/vllm`, `StatefulSet/redis`, `DaemonSet/dcgm-exporter`; "" when unknown
    workload: str = ""
    host_network: bool = False

    def describe(self) -> str:
        """`pod vllm-5d8f7c9b4-x2k9q (Deployment/vllm)`."""
        return f"pod {self.name}" + (f" ({self.workload})" if self.workload else "")


def workload_of(kind: str, name: str) -> str:
    """The workload a pod belongs to, from its controller: a ReplicaSet named after a
    Deployment's template hash is that Deployment's; any other controller is itself."""
    if not kind or not name or kind == "<none>":
        return ""
    if kind == "ReplicaSet":
        m = _TEMPLATE_HASH.match(name)
        if m:
            return f"Deployment/{m['base']}"
    return f"{kind}/{name}"


def _pod_label(labels: Mapping[str, str]) -> str:
    return labels.get("exported_pod") or labels.get("pod") or ""


@dataclass
class PodMap:
    """Pods by name and by IP. A name or IP that two pods on different nodes share in the
    window (two namespaces, an address reused) places nothing: it is left out of the join."""

    pods: dict[str, Pod] = field(default_factory=dict)
    by_ip: dict[str, str] = field(default_factory=dict)  # pod IP → node
    #: every pod's workload by name, a pod no node has taken (Pending) too
    owners: dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_labels(cls, label_sets: Iterable[Mapping[str, str]]) -> PodMap:
        pods: dict[str, Pod] = {}
        nodes_of_name: dict[str, set[str]] = {}
        nodes_of_ip: dict[str, set[str]] = {}
        owners: dict[str, str] = {}
        for lb in label_sets:
            name, node = _pod_label(lb), lb.get("exported_node") or lb.get("node", "")
            kind = lb.get("created_by_kind", "")
            if name:
                owners[name] = workload_of(kind, lb.get("created_by_name", ""))
            if not name or not node:
                continue  # a pod not yet scheduled runs nowhere
            pods[name] = Pod(
                lb.get("exported_namespace") or lb.get("namespace", ""), name, node,
                lb.get("pod_ip", ""), workload_of(kind, lb.get("created_by_name", "")),
                lb.get("host_network", "") == "true",
            )  # fmt: skip
            nodes_of_name.setdefault(name, set()).add(node)
        out = cls(owners=owners)
        out.pods = {n: p for n, p in sorted(pods.items()) if len(nodes_of_name[n]) == 1}
        for p in out.pods.values():
            if p.ip and not p.host_network:  # a host-network pod's IP is its node's
                nodes_of_ip.setdefault(p.ip, set()).add(p.node)
        out.by_ip = {ip: next(iter(ns)) for ip, ns in sorted(nodes_of_ip.items()) if len(ns) == 1}
        return out

    def __bool__(self) -> bool:
        return bool(self.pods)

    def identity(self, labels: Mapping[str, str]) -> str:
        """The identity of a series: its pod's node where the pod is known, the node of the
        pod scraped at its address, else what `identity.resolve` says."""
        pod = self.pods.get(_pod_label(labels))
        if pod is not None:
            return pod.node
        ident = resolve(labels)
        inst = labels.get("instance")
        if inst and ident == host_of(inst):
            return self.by_ip.get(ident, ident)
        return ident

    def on_node(self, node: str) -> list[Pod]:
        """The pods seen on a node in the window, by name."""
        return [p for p in self.pods.values() if p.node == node]

    def to_dict(self) -> dict[str, dict[str, str | bool]]:
        return {n: {k: v for k, v in vars(p).items() if k != "name"} for n, p in self.pods.items()}

    @classmethod
    def from_dict(cls, data: Mapping[str, Mapping[str, object]]) -> PodMap:
        """The pods saved by `to_dict` (a bundle's), each as `kube_pod_info` would give it."""
        rows = []
        for name, p in data.items():
            wl = str(p.get("workload", ""))
            kind, _, owner = wl.partition("/")
            rows.append({
                "pod": name, "namespace": str(p.get("namespace", "")),
                "node": str(p.get("node", "")), "pod_ip": str(p.get("ip", "")),
                "host_network": "true" if p.get("host_network") else "false",
                "created_by_kind": kind, "created_by_name": owner,
            })  # fmt: skip
        return cls.from_labels(rows)
