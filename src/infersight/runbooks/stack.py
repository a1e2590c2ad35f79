"""The stack a runbook acts on, read from the exporters found: which gateway sits in front
(HAProxy, ingress-nginx, Envoy, NGINX Plus) and whether it all runs on Kubernetes.

A runbook variant declares the parts it drives (`stack:` in its file); the stack detected here
picks the variant. The facts come from what a pull or a bundle recorded (`Diagnosis.source`:
`families`, a simulator's `dialect`), from `probe` (the families and metric names on a
server), or from the user (`--stack`). Each part comes with the reason it was assumed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

StackPart = Literal["kubernetes", "ingress-nginx", "haproxy", "envoy", "nginx-plus"]
PARTS: tuple[str, ...] = get_args(StackPart)


class StackError(ValueError):
    """A stack named by the user that infersight does not know; `str()` is the line."""


def _gateway_families() -> dict[str, StackPart]:
    return {
        "ingress_nginx": "ingress-nginx",
        "haproxy": "haproxy",
        "envoy": "envoy",
        "nginx_plus": "nginx-plus",
        "kube_state_metrics": "kubernetes",
    }


def _implied() -> dict[StackPart, tuple[StackPart, str]]:
    return {"ingress-nginx": ("kubernetes", "ingress-nginx is Kubernetes' ingress controller")}


class StackConfig(BaseModel):
    """What reveals each part of a stack, with the reason."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    families: dict[str, StackPart] = Field(
        default_factory=_gateway_families,
        description="Catalog exporter families that name a gateway (its metrics are its own) "
        "or the cluster (kube-state-metrics describes Kubernetes objects only).",
    )
    implies: dict[StackPart, tuple[StackPart, str]] = Field(
        default_factory=_implied,
        description="Parts that run only on another: finding one is finding both.",
    )
    kubernetes_metrics: tuple[str, ...] = Field(
        (
            "kube_pod_info",
            "kube_deployment_status_replicas",
            "kube_endpoint_address",
            "kube_node_info",
            "kubelet_running_pods",
        ),
        description="Metric names only a cluster has (kube-state-metrics, the kubelet): any of "
        "them on the server means the services run on Kubernetes.",
    )


@dataclass(frozen=True)
class Stack:
    parts: frozenset[str]
    #: one reason per part, in the order found ("" for a part given by the user)
    why: tuple[str, ...] = ()
    #: where the facts came from: "from the exporters found", "given with --stack"
    origin: str = ""

    @property
    def known(self) -> bool:
        return bool(self.parts)

    @property
    def name(self) -> str:
        """`kubernetes + ingress-nginx`, or `not detected`."""
        return " + ".join(p for p in PARTS if p in self.parts) or "not detected"

    def describe(self) -> str:
        """The stack and why it was assumed, on one line."""
        if not self.parts:
            return f"not detected ({self.origin or 'no exporter families recorded'})"
        why = "; ".join(w for w in self.why if w)
        return f"{self.name} ({self.origin}{': ' + why if why else ''})"


def detect(
    families: Iterable[str],
    metric_names: Iterable[str] = (),
    origin: str = "from the exporters found",
    cfg: StackConfig | None = None,
) -> Stack:
    """The stack the exporter families (and, when known, the server's metric names) reveal."""
    cfg = cfg or StackConfig()
    parts: dict[str, str] = {}
    for fam in families:
        part = cfg.families.get(fam.strip())
        if part is not None and part not in parts:
            parts[part] = f"{fam.strip()} metrics"
    names = set(metric_names)
    kube = [m for m in cfg.kubernetes_metrics if m in names]
    if kube and "kubernetes" not in parts:
        parts["kubernetes"] = f"{kube[0]} on the server"
    for part, (also, why) in cfg.implies.items():
        if part in parts and also not in parts:
            parts[also] = why
    return Stack(frozenset(parts), tuple(parts.values()), origin if parts else "")


def from_source(source: Mapping[str, str], cfg: StackConfig | None = None) -> Stack:
    """The stack a diagnosis's source recorded: its exporter families, a simulator's dialect."""
    named = [source.get("dialect", ""), *source.get("families", "").split(",")]
    families = [f.strip() for f in named if f.strip()]
    if not families:
        return Stack(frozenset(), (), "the source records no exporter families")
    found = detect(families, (), "from the exporters found", cfg)
    if not found.known:
        return Stack(frozenset(), (), f"no gateway or cluster among {', '.join(families)}")
    return found


def parse_stack(text: str) -> Stack:
    """`--stack kubernetes,ingress-nginx`: the parts the user names; a part infersight does not
    know is refused in one line."""
    parts = [p.strip().lower() for p in text.split(",") if p.strip()]
    unknown = [p for p in parts if p not in PARTS]
    if unknown or not parts:
        bad = ", ".join(unknown) or "nothing"
        raise StackError(f"--stack {bad}: name parts among {', '.join(PARTS)}")
    return Stack(frozenset(parts), ("",) * len(parts), "given with --stack")


def probe_stack(url: str, timeout: float, cfg: StackConfig | None = None) -> Stack:
    """The stack the exporters on a Prometheus-compatible server reveal (as `probe` finds
    them); a server that cannot be asked leaves it undetected, saying why."""
    from infersight.exporters import load_catalog
    from infersight.redact import redact_url
    from infersight.sources.errors import SourceError
    from infersight.sources.prometheus import PrometheusClient

    shown = redact_url(url)
    try:
        names = set(PrometheusClient(url, timeout=timeout, retries=1).metric_names())
    except SourceError as exc:
        return Stack(frozenset(), (), f"cannot ask {shown}: {exc}")
    families = [f.name for f in load_catalog().detect(names)]
    found = detect(families, names, f"from the exporters on {shown}", cfg)
    if not found.known:
        among = ", ".join(families) or "no known exporter"
        why = f"no gateway or cluster among the exporters on {shown}: {among}"
        return Stack(frozenset(), (), why)
    return found
