"""Alert annotations: the figures, the runbook (its id, and `runbook_url`, the annotation
Alertmanager templates and Grafana link), and the command that diagnoses the alert.

Prometheus renders these Go templates when the alert fires: `$value` is the expression's
value, `query` runs PromQL at the evaluation time (the baselines the summary quotes, and the
time itself for the `--at` of the diagnose command).
"""

from __future__ import annotations

from infersight.alerts.config import DIAGNOSE_FIRST, AlertsConfig
from infersight.signals import get_signal

#: Go template pipes that print a value in the signal's unit
_HUMAN = {
    "s": "humanizeDuration",
    "ratio": "humanizePercentage",
    "bytes": "humanize1024",
    "MHz": 'printf "%.0f"',
    "celsius": 'printf "%.0f"',
}


def human(unit: str) -> str:
    return _HUMAN.get(unit, "humanize")


def value(signal: str) -> str:
    return "{{ $value | " + human(get_signal(signal).unit) + " }}"


def queried(expr: str, signal: str, label: str = "instance") -> str:
    """The value of `expr` for this alert's `label` (`%s` in expr stands for it), or `n/a`."""
    pipe = human(get_signal(signal).unit)
    return (
        '{{ with printf "' + expr.replace('"', '\\"') + '" $labels.' + label + " | query }}"
        "{{ . | first | value | " + pipe + " }}{{ else }}n/a{{ end }}"
    )


def diagnose_command(cfg: AlertsConfig) -> str:
    return (
        f"infersight diagnose -p {cfg.prometheus_url} --at "
        '{{ with query "vector(time())" }}{{ . | first | value | printf "%.0f" }}{{ end }}'
        " --window 1h"
    )


def runbook_url(runbook: str, cfg: AlertsConfig) -> str:
    """The runbook's page: its section of the runbooks page, or, for an alert whose cause the
    diagnosis must name first, the section on diagnosing from an alert."""
    return f"{cfg.runbook_base_url}#{runbook or DIAGNOSE_FIRST}"


def notes(summary: str, rule: str, runbook: str, cfg: AlertsConfig) -> dict[str, str]:
    return {
        "summary": summary,
        "diagnose_rule": rule,
        "runbook": runbook or "none: run the diagnosis first",
        "runbook_url": runbook_url(runbook, cfg),
        "diagnose": diagnose_command(cfg),
    }
