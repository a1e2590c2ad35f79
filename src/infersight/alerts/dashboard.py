"""A Grafana dashboard of the recorded signals, built with grafana-foundation-sdk.

One row per layer in the seed's order of investigation (access, service, inference,
dependency, infrastructure: §2.3), one time-series panel per signal, each with yesterday's
values as a dashed overlay (seed §6.1 reads every soft metric against the same time
yesterday), and template variables for the machine (`host`, which joins an engine target and
its GPU exporter) and the model.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from infersight.alerts.rules import recorded
from infersight.signals import Layer, Signal, all_signals

#: Grafana's unit ids for the catalog's units
UNITS = {
    "s": "s",
    "ratio": "percentunit",
    "bytes": "bytes",
    "celsius": "celsius",
    "MHz": "suffix: MHz",
    "W": "watt",
    "count": "short",
    "per_s": "suffix:/s",
    "cores": "short",
    "code": "none",
}
#: what each panel's queries filter on; `$model` also matches series without a model label
#: (a GPU, a cache), so picking a model keeps the machine's other layers in view
MATCHERS = '{host=~"$instance", model=~"$model|"}'
YESTERDAY = "1d"
UID = "infersight-layers"


def queries(signal: str) -> tuple[str, str]:
    """The panel's two queries: now, and the same time yesterday."""
    sel = recorded(signal) + MATCHERS
    return sel, f"{sel} offset {YESTERDAY}"


def _panel(sig: Signal) -> Any:
    from grafana_foundation_sdk.builders import prometheus, timeseries
    from grafana_foundation_sdk.models.dashboard import DataSourceRef, DynamicConfigValue

    now, before = queries(sig.name)
    return (
        timeseries.Panel()
        .title(sig.name)
        .datasource(DataSourceRef(type_val="prometheus", uid="${datasource}"))
        .description(sig.description)
        .unit(UNITS[sig.unit])
        .span(8)
        .height(7)
        .with_target(
            prometheus.Dataquery().expr(now).legend_format("{{host}} {{model}}").ref_id("A")
        )
        .with_target(
            prometheus.Dataquery()
            .expr(before)
            .legend_format("{{host}} {{model}} yesterday")
            .ref_id("B")
        )
        .override_by_query(
            "B",
            [
                DynamicConfigValue("custom.lineStyle", {"fill": "dash", "dash": [10, 10]}),
                DynamicConfigValue("custom.lineWidth", 1),
            ],
        )
    )


def _variable(name: str, label: str, source: str) -> Any:
    from grafana_foundation_sdk.builders import dashboard
    from grafana_foundation_sdk.models.dashboard import DataSourceRef, VariableRefresh

    return (
        dashboard.QueryVariable(name)
        .label(label)
        .datasource(DataSourceRef(type_val="prometheus", uid="${datasource}"))
        .query(f'label_values({{__name__=~"infersight:.+"}}, {source})')
        .refresh(VariableRefresh.ON_TIME_RANGE_CHANGED)
        .multi(True)
        .include_all(True)
        .all_value(".*")
    )


def build(signals: Iterable[str] | None = None, title: str = "infersight: layers") -> Any:
    """The dashboard model (grafana_foundation_sdk's `Dashboard`) for these signals (default:
    every canonical signal), rows in layer order, signals in catalog order."""
    from grafana_foundation_sdk.builders import dashboard

    wanted = set(all_signals()) if signals is None else set(signals)
    ds = dashboard.DatasourceVariable("datasource").label("Prometheus").type("prometheus")
    board = (
        dashboard.Dashboard(title)
        .uid(UID)
        .tags(["infersight", "inference"])
        .time("now-6h", "now")
        .refresh("1m")
        .variables(
            [ds, _variable("instance", "machine", "host"), _variable("model", "model", "model")]
        )
    )
    for layer in Layer:
        sigs = [s for s in all_signals().values() if s.layer is layer and s.name in wanted]
        if not sigs:
            continue
        board = board.with_row(dashboard.Row(f"{layer.order + 1}. {layer.value}"))
        for sig in sigs:
            board = board.with_panel(_panel(sig))
    return board.build()


def to_json(model: Any) -> str:
    from grafana_foundation_sdk.cog.encoder import JSONEncoder

    return json.dumps(model, cls=JSONEncoder, indent=2, sort_keys=True) + "\n"


def validate(text: str) -> list[str]:
    """Problems with a dashboard JSON: it must load into the SDK's types and come back the
    same, and every panel query must parse (template variables filled in). Empty: valid."""
    from grafana_foundation_sdk.models.dashboard import Dashboard

    from infersight.promql import PromQLSyntaxError, parse

    data = json.loads(text)
    problems: list[str] = []
    again = json.loads(to_json(Dashboard.from_json(data)))
    if again != data:
        problems.append("the JSON does not round-trip through the SDK's Dashboard type")
    for expr in panel_queries(data):
        try:
            parse(expr.replace("$instance", ".*").replace("$model", ".*"))
        except PromQLSyntaxError as exc:
            problems.append(f"{expr}: {exc}")
    return problems


def panel_queries(data: dict[str, Any]) -> list[str]:
    return [
        str(t["expr"])
        for p in data.get("panels", [])
        for t in p.get("targets", [])
        if isinstance(t, dict) and "expr" in t
    ]
