"""A Prometheus rule as data, and the name a canonical signal is recorded under."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


def recorded(signal: str) -> str:
    """`service.e2e_latency_p99` -> `infersight:service_e2e_latency_p99`."""
    return "infersight:" + signal.replace(".", "_")


@dataclass(frozen=True)
class Rule:
    """A recording rule (`record`) or an alerting rule (`alert`), as the rule file holds it."""

    expr: str
    record: str = ""
    alert: str = ""
    for_: str = ""
    labels: dict[str, str] = field(default_factory=dict)
    annotations: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"record": self.record} if self.record else {"alert": self.alert}
        out["expr"] = self.expr
        if self.for_ and self.for_ not in ("0", "0s", "0m"):
            out["for"] = self.for_
        if self.labels:
            out["labels"] = dict(self.labels)
        if self.annotations:
            out["annotations"] = dict(self.annotations)
        return out


@dataclass(frozen=True)
class Group:
    name: str
    interval: str
    rules: tuple[Rule, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "interval": self.interval,
            "rules": [r.to_dict() for r in self.rules],
        }
