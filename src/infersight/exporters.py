"""Exporter families: how each real exporter's metrics map to canonical signals.

A family is a YAML file in `catalog/` (or in a user's folder): which metric names reveal it, and
per canonical signal one or more PromQL alternatives, newest naming first. Expressions carry two
placeholders: `$window` (the rate window) and `$by` (the instance identity labels). The same
expression is sent to a Prometheus-compatible server as is, or evaluated locally over raw samples.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from infersight import userfile
from infersight.promql import PromQLSyntaxError, metric_names, parse
from infersight.promql.ast import Expr
from infersight.signals import all_signals
from infersight.yamltext import parse_yaml

#: Labels that identify a machine or pod, in the order identity.resolve prefers them.
IDENTITY_LABELS: tuple[str, ...] = ("node", "hostname", "Hostname", "instance", "pod")
DEFAULT_WINDOW = "5m"
#: Names every Prometheus client library exports for any process (and the server's own `up`):
#: a family's mapping may read them, but finding one reveals no family.
GENERIC_METRIC_PREFIXES: tuple[str, ...] = ("process_", "go_", "python_")
GENERIC_METRIC_NAMES: frozenset[str] = frozenset({"up"})


class CatalogError(ValueError):
    """A catalog file is malformed; the message names the file and the field."""


class _AltSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")
    expr: str
    note: str = ""


class _FamilySpec(BaseModel):
    model_config = ConfigDict(extra="forbid")
    family: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    title: str
    layer_hint: str
    priority: int = Field(ge=0, le=100)
    source: str
    #: the exporter's version whose names were checked, and against what (a real scrape)
    checked: str = ""
    notes: str = ""
    detect: list[str] = Field(min_length=1)
    signals: dict[str, list[str | _AltSpec]]

    @field_validator("signals")
    @classmethod
    def _known_signals(cls, v: dict[str, list[str | _AltSpec]]) -> dict[str, list[str | _AltSpec]]:
        unknown = sorted(set(v) - set(all_signals()))
        if unknown:
            raise ValueError(f"unknown canonical signal(s): {', '.join(unknown)}")
        for name, alts in v.items():
            if not alts:
                raise ValueError(f"{name}: needs at least one expression")
        return v


@dataclass(frozen=True)
class SignalMapping:
    """One way to compute a signal from one family's metrics."""

    family: str
    signal: str
    template: str
    metrics: frozenset[str]
    note: str = ""

    def render(self, window: str = DEFAULT_WINDOW, by: Iterable[str] = IDENTITY_LABELS) -> str:
        """The PromQL to send to a server."""
        return self.template.replace("$window", window).replace("$by", ", ".join(by))

    def parsed(self, window: str = DEFAULT_WINDOW, by: Iterable[str] = IDENTITY_LABELS) -> Expr:
        return parse(self.render(window, by))


@dataclass(frozen=True)
class Family:
    name: str
    title: str
    priority: int
    source: str
    notes: str
    detect: tuple[str, ...]
    mappings: dict[str, tuple[SignalMapping, ...]]  # signal -> alternatives, preferred first
    path: str
    checked: str = ""

    @property
    def signals(self) -> list[str]:
        return list(self.mappings)

    def present_in(self, metric_names_available: set[str]) -> bool:
        return any(m in metric_names_available for m in self.detect)

    def pick(self, signal: str, available: set[str]) -> SignalMapping | None:
        """The first alternative whose metrics all exist, or None."""
        for alt in self.mappings.get(signal, ()):
            if alt.metrics <= available:
                return alt
        return None


def _load_family(text: str, origin: str) -> Family:
    try:
        raw: Any = parse_yaml(text)
    except yaml.YAMLError as exc:
        raise CatalogError(f"{origin}: not valid YAML: {exc}".replace("\n", " ")) from None
    try:
        spec = _FamilySpec.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(top level)"
        raise CatalogError(f"{origin}: field {where}: {first['msg']}") from None
    mappings: dict[str, tuple[SignalMapping, ...]] = {}
    for signal, alts in spec.signals.items():
        out = []
        for k, alt in enumerate(alts):
            expr, note = (alt, "") if isinstance(alt, str) else (alt.expr, alt.note)
            try:
                tree = parse(expr.replace("$window", DEFAULT_WINDOW).replace("$by", "instance"))
            except PromQLSyntaxError as exc:
                raise CatalogError(f"{origin}: field signals.{signal}.{k}: {exc}") from None
            out.append(SignalMapping(spec.family, signal, expr, metric_names(tree), note))
        mappings[signal] = tuple(out)
    return Family(
        spec.family,
        spec.title,
        spec.priority,
        spec.source,
        spec.notes.strip(),
        tuple(spec.detect),
        mappings,
        origin,
        spec.checked.strip(),
    )


@dataclass(frozen=True)
class Catalog:
    families: dict[str, Family]

    def ordered(self) -> list[Family]:
        """Families by priority: where two cover one signal on one instance, the first wins."""
        return sorted(self.families.values(), key=lambda f: (f.priority, f.name))

    def detect(self, available: set[str]) -> list[Family]:
        """Families present: by a marker name, or by any metric of their mappings that no
        other family's mappings read (relabelling often drops a marker counter and keeps the
        histograms); generic client-library names prove nothing."""
        own = self._own_metrics()
        return [f for f in self.ordered() if f.present_in(available) or own[f.name] & available]

    def _own_metrics(self) -> dict[str, frozenset[str]]:
        used: dict[str, set[str]] = {}
        for f in self.families.values():
            for alts in f.mappings.values():
                for alt in alts:
                    for m in alt.metrics:
                        used.setdefault(m, set()).add(f.name)
            for m in f.detect:
                used.setdefault(m, set()).add(f.name)
        return {
            name: frozenset(
                m for alts in f.mappings.values() for alt in alts for m in alt.metrics
                if used[m] == {name}
                and m not in GENERIC_METRIC_NAMES
                and not m.startswith(GENERIC_METRIC_PREFIXES)
            )
            for name, f in self.families.items()
        }  # fmt: skip

    def signals_of(self, family: str) -> list[str]:
        return self.families[family].signals

    def mappings_for(self, signal: str) -> list[SignalMapping]:
        return [alt for f in self.ordered() for alt in f.mappings.get(signal, ())]


@cache
def _builtin() -> tuple[Family, ...]:
    root = resources.files("infersight.catalog")
    out = []
    for entry in sorted(root.iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".yaml") and entry.name != "signals.yaml":
            out.append(_load_family(entry.read_text("utf-8"), f"catalog/{entry.name}"))
    return tuple(out)


def load_catalog(extra_dirs: Iterable[Path] = ()) -> Catalog:
    """Built-in families plus every `*.yaml` in extra_dirs (a user's family replaces a built-in
    one of the same name)."""
    families = {f.name: f for f in _builtin()}
    for d in extra_dirs:
        if not d.is_dir():
            raise CatalogError(f"{d}: not a directory of exporter mapping files")
        for p in sorted(d.glob("*.yaml")):
            try:
                text = userfile.read_text(p)
            except userfile.UserFileError as exc:
                raise CatalogError(str(exc)) from None
            fam = _load_family(text, str(p))
            families[fam.name] = fam
    return Catalog(families)
