"""Monitoring as code (seed §6.1): Prometheus rules and a Grafana dashboard from the catalog.

`render.build` makes the rule groups for a set of exporter families, `render.write` the two
rule files; `dashboard.build` the dashboard; `replay` and `backtest` check rules on history.
"""
