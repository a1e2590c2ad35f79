"""Error-budget burn alerts: multi-window, multi-burn-rate, as Sloth and Pyrra generate them.

Each pair fires when both its long window (is the budget really burning?) and its short
window (is it still burning now?) exceed `factor` times the allowed error rate.
"""

from __future__ import annotations

from infersight.alerts.annotations import notes
from infersight.alerts.config import AlertsConfig
from infersight.alerts.recording import SLO_ERRORS, SLO_SLOW
from infersight.alerts.rules import Group, Rule


def _pairs(
    kind: str, record: str, objective: float, cfg: AlertsConfig, at_gateway: bool = False
) -> list[Rule]:
    budget = 1 - objective
    what = "failed" if kind == "errors" else f"slower than {cfg.slo.latency_threshold_s:g}s"
    alert = "InferErrorBudgetBurn" if kind == "errors" else "InferLatencyBudgetBurn"
    rule = "errors_high" if kind == "errors" else "latency_high"
    # the gateway's requests carry no model label: the whole service, as its users see it
    where = "at the gateway" if at_gateway else "model {{ $labels.model_name }}{{ $labels.model }}"
    rules = []
    for long_w, short_w, factor, severity, for_ in cfg.slo.windows:
        limit = factor * budget
        expr = f"({record}{long_w} > {limit:g}) and ({record}{short_w} > {limit:g})"
        summary = (
            f"{{{{ $value | humanizePercentage }}}} of requests {what} over {long_w} "
            f"({where}): burning the "
            f"{objective:.2%} objective's budget {factor:g}x too fast, and still in the last "
            f"{short_w}"
        )
        rules.append(
            Rule(
                expr=expr,
                alert=alert,
                for_=for_,
                labels={
                    "severity": severity,
                    "layer": "access" if at_gateway else "service",
                    "slo": kind,
                    "window": f"{long_w}/{short_w}",
                },
                annotations=notes(summary, rule, "", cfg),
            )
        )
    return rules


def burn_group(have: dict[str, bool], cfg: AlertsConfig) -> Group | None:
    rules: list[Rule] = []
    if have.get("errors"):
        rules += _pairs("errors", SLO_ERRORS, cfg.slo.error_objective, cfg)
    if have.get("latency"):
        gateway = bool(have.get("latency_at_gateway"))
        rules += _pairs("latency", SLO_SLOW, cfg.slo.latency_objective, cfg, gateway)
    return Group("infersight-slo-burn", cfg.interval, tuple(rules)) if rules else None
