"""Canonical signals: the vocabulary shared by sources, detection and diagnosis.

The engine never sees an exporter's metric name, only these. Each signal has a layer (in the
seed's order of investigation), a unit already normalised at the edge, the direction that means
trouble, and how several series of one instance combine into one value.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from functools import cache
from importlib import resources
from typing import Any, Literal

from infersight.yamltext import parse_yaml


class Layer(StrEnum):
    """The five layers of seed §2.1, in the order §2.3 walks them."""

    ACCESS = "access"
    SERVICE = "service"
    INFERENCE = "inference"
    DEPENDENCY = "dependency"
    INFRASTRUCTURE = "infrastructure"

    @property
    def order(self) -> int:
        return list(Layer).index(self)


Unit = Literal["s", "ratio", "bytes", "celsius", "MHz", "W", "count", "per_s", "cores", "code"]
Direction = Literal["up", "down", "both"]
Combine = Literal["sum", "mean", "max", "min"]
MeasuredAt = Literal["client", "server"]
Part = Literal["gateway", "service", "engine", "gpu", "host", "cache", "retrieval", "instance"]
Facet = Literal[
    "time", "waiting", "saturation", "errors", "output",
    "arrivals", "sends", "capacity", "availability", "input", "process", "resource", "network",
]  # fmt: skip
#: the facets a path walk explains (what a slowdown is made of); the others explain them
EFFECTS: frozenset[str] = frozenset({"time", "waiting", "saturation", "errors", "output"})

_UNITS = set(Unit.__args__)  # type: ignore[attr-defined]
_DIRECTIONS = set(Direction.__args__)  # type: ignore[attr-defined]
_COMBINES = set(Combine.__args__)  # type: ignore[attr-defined]
_PARTS = set(Part.__args__)  # type: ignore[attr-defined]
_FACETS = set(Facet.__args__)  # type: ignore[attr-defined]
_FIELDS = {
    "unit", "bad", "combine", "description", "seed",
    "measured_at", "abs_floor", "trend", "load", "demand", "rides_bursts",
    "user_facing", "part", "facet", "answers", "independent", "at_once", "event",
}  # fmt: skip


@dataclass(frozen=True)
class Signal:
    name: str
    layer: Layer
    unit: Unit
    bad: Direction
    combine: Combine
    description: str
    seed: str
    part: Part
    facet: Facet
    #: who timed a latency: a client sees time lost before the server got the request
    measured_at: MeasuredAt | None = None
    #: the smallest change worth a look, where the unit's floor does not fit
    abs_floor: float | None = None
    trend: bool = False  # leaks slowly: worth a slope and a time to exhaustion
    load: bool = False  # follows demand: a change counts only when it lasts
    #: the requests arriving: a burst of it passes, and what followed it up and down with it
    demand: bool = False
    #: queueing and occupancy: rises and falls with every burst of requests in a healthy service
    rides_bursts: bool = False
    user_facing: int | None = None  # what users feel, in the order seed §2.3 reads it
    #: 1 while the part answers, 0 when it does not: an availability flag
    answers: bool = False
    #: more work does not make it (a hardware error, another process on the card)
    independent: bool = False
    #: counts what happens at one moment, not a rate: a burst an average rate hides
    at_once: bool = False
    #: counts events that are over once counted (a restart, an OOM kill): what they did to the
    #: users is the incident, and a window where nobody felt them is not one
    event: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "layer": self.layer.value,
            "unit": self.unit,
            "bad": self.bad,
            "combine": self.combine,
            "description": self.description,
            "seed": self.seed,
            "measured_at": self.measured_at,
        }


class UnknownSignalError(KeyError):
    def __str__(self) -> str:
        return f"unknown signal {self.args[0]!r}; `infersight signals` lists the known ones"


def _parse(raw: dict[str, Any]) -> dict[str, Signal]:
    signals: dict[str, Signal] = {}
    for layer_name, entries in raw.items():
        layer = Layer(layer_name)
        for name, spec in entries.items():
            prefix = "infra" if layer is Layer.INFRASTRUCTURE else layer.value
            if not name.startswith(prefix + "."):
                raise ValueError(f"signal {name!r} is listed under layer {layer_name!r}")
            checks = (
                ("unit", _UNITS),
                ("bad", _DIRECTIONS),
                ("combine", _COMBINES),
                ("part", _PARTS),
                ("facet", _FACETS),
            )
            for field, allowed in checks:
                if spec.get(field) not in allowed:
                    raise ValueError(
                        f"signal {name!r}: {field}={spec.get(field)!r} not in {sorted(allowed)}"
                    )
            unknown = set(spec) - _FIELDS
            if unknown:
                raise ValueError(f"signal {name!r}: unknown field(s) {sorted(unknown)}")
            if spec.get("measured_at") not in (None, "client", "server"):
                raise ValueError(f"signal {name!r}: measured_at must be client or server")
            signals[name] = Signal(
                name=name,
                layer=layer,
                unit=spec["unit"],
                bad=spec["bad"],
                combine=spec["combine"],
                description=str(spec["description"]),
                seed=str(spec["seed"]),
                part=spec["part"],
                facet=spec["facet"],
                measured_at=spec.get("measured_at"),
                abs_floor=None if spec.get("abs_floor") is None else float(spec["abs_floor"]),
                trend=bool(spec.get("trend", False)),
                load=bool(spec.get("load", False)),
                demand=bool(spec.get("demand", False)),
                rides_bursts=bool(spec.get("rides_bursts", False)),
                user_facing=None if spec.get("user_facing") is None else int(spec["user_facing"]),
                answers=bool(spec.get("answers", False)),
                independent=bool(spec.get("independent", False)),
                at_once=bool(spec.get("at_once", False)),
                event=bool(spec.get("event", False)),
            )
    return signals


@cache
def all_signals() -> dict[str, Signal]:
    """Every canonical signal by name, in layer order."""
    text = resources.files("infersight.catalog").joinpath("signals.yaml").read_text("utf-8")
    return _parse(parse_yaml(text))


def get_signal(name: str) -> Signal:
    try:
        return all_signals()[name]
    except KeyError:
        raise UnknownSignalError(name) from None


def measured_at(name: str) -> MeasuredAt | None:
    """client | server for a latency signal (who timed it), None for the rest."""
    return get_signal(name).measured_at


def answering() -> tuple[str, ...]:
    """The availability flags (`answers` in signals.yaml): 0 means the part stopped answering."""
    return tuple(s.name for s in all_signals().values() if s.answers)


def signals_in(layer: Layer) -> list[Signal]:
    return [s for s in all_signals().values() if s.layer is layer]


def is_event(name: str) -> bool:
    """Whether a signal counts events that are over once counted (`event` in signals.yaml)."""
    sig = all_signals().get(name)
    return sig is not None and sig.event
