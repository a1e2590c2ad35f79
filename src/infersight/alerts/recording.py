"""Recording rules: each canonical signal under one name, whatever exporter provides it.

The catalog's PromQL alternatives (newest naming first, families by priority) are joined with
`or`, so the first that has data for a target wins, exactly as `infersight pull` picks them.
With the server's metric names known (`-p URL`), only the alternatives it can answer are kept.
Every recorded series also gets a `host` label cut from its target, so the engine on
`node-7:8000` and dcgm-exporter on `node-7:9400` can be joined `on(host)`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from infersight.alerts.config import GATEWAY_LATENCY, AlertsConfig
from infersight.alerts.rules import Group, Rule, recorded
from infersight.exporters import Family, SignalMapping
from infersight.promql import metric_names, parse
from infersight.signals import all_signals

#: the windows the burn-rate alerts read (SLO.windows), each recorded once
SLO_ERRORS = "infersight:slo_errors:ratio_rate"
SLO_SLOW = "infersight:slo_slow:ratio_rate"


def pick(
    families: Sequence[Family], signal: str, available: set[str] | None
) -> list[SignalMapping]:
    """The alternatives for `signal` in priority order; with `available`, only the answerable."""
    out: list[SignalMapping] = []
    for fam in families:
        for alt in fam.mappings.get(signal, ()):
            if available is None or alt.metrics <= available:
                out.append(alt)
    return out


def _with_host(expr: str, cfg: AlertsConfig) -> str:
    """`host` from the target, and `model` from vLLM's `model_name` (Triton says `model`)."""
    regex = cfg.host_regex.replace("\\", "\\\\")
    inner = f'label_replace({expr}, "host", "$1", "{cfg.host_from}", "{regex}")'
    return f'label_replace({inner}, "model", "$1", "model_name", "(.+)")'


def _join(alts: Sequence[SignalMapping], window: str, by: Sequence[str]) -> str:
    parts = [a.render(window, by) for a in alts]
    return parts[0] if len(parts) == 1 else " or ".join(f"({p})" for p in parts)


def signal_group(
    families: Sequence[Family], available: set[str] | None, cfg: AlertsConfig
) -> tuple[Group, list[str]]:
    """One recording rule per signal the families cover, and the signals covered."""
    rules, covered = [], []
    for name in all_signals():
        alts = pick(families, name, available)
        if not alts:
            continue
        expr = _with_host(_join(alts, cfg.window, cfg.by), cfg)
        rules.append(Rule(expr=expr, record=recorded(name)))
        covered.append(name)
    return Group("infersight-signals", cfg.interval, tuple(rules)), covered


def _le_matcher(seconds: float) -> str:
    """`le` as client libraries print it: 2.5 is "2.5", 10 may be "10" or "10.0"."""
    text = repr(float(seconds))
    head = text.removesuffix(".0")
    tail = r"(\.0*)?" if "." not in head else "0*"
    return re.escape(head).replace("\\", "\\\\") + tail.replace("\\", "\\\\")


def _slow_ratio(alt: SignalMapping, window: str, by: str, threshold: float) -> str | None:
    """The share of requests slower than `threshold`, from the histogram behind a P99
    mapping; None when the mapping reads no `_bucket` series (a summary, a gauge)."""
    tree = parse(alt.render(window, ("instance",)))
    buckets = sorted(m for m in metric_names(tree) if m.endswith("_bucket"))
    if len(buckets) != 1 or "histogram_quantile" not in alt.template:
        return None
    base = buckets[0].removesuffix("_bucket")
    le = _le_matcher(threshold)
    return (
        f'1 - (sum by ({by}) (rate({base}_bucket{{le=~"{le}"}}[{window}])) '
        f"/ sum by ({by}) (rate({base}_count[{window}])))"
    )


def slo_group(
    families: Sequence[Family], available: set[str] | None, cfg: AlertsConfig
) -> tuple[Group | None, dict[str, bool]]:
    """The error and slow-request ratios over every window the burn-rate pairs read, per
    model (an SLO is the service's, not one instance's). The slow share is read from the
    gateway's request histogram where an exporter has one (what users wait for), else from
    the engine's. Returns which SLIs could be built, and whether the gateway's was read."""
    by = ", ".join(label for label in cfg.by if label != "instance") or "job"
    windows = sorted({w for pair in cfg.slo.windows for w in pair[:2]}, key=_seconds)
    errors = pick(families, "service.error_ratio", available)
    gateway = pick(families, GATEWAY_LATENCY, available)
    engine = pick(families, "service.e2e_latency_p99", available)
    threshold = cfg.slo.latency_threshold_s
    rules: list[Rule] = []
    at_gateway = False
    for w in windows:
        if errors:
            rules.append(Rule(expr=_join(errors, w, (by,)), record=f"{SLO_ERRORS}{w}"))
        slow = [s for s in (_slow_ratio(a, w, by, threshold) for a in gateway) if s]
        at_gateway = bool(slow)
        slow = slow or [s for s in (_slow_ratio(a, w, by, threshold) for a in engine) if s]
        if slow:
            expr = slow[0] if len(slow) == 1 else " or ".join(f"({s})" for s in slow)
            rules.append(Rule(expr=expr, record=f"{SLO_SLOW}{w}"))
    have = {
        "errors": bool(errors),
        "latency": any(r.record.startswith(SLO_SLOW) for r in rules),
        "latency_at_gateway": at_gateway,
    }
    return (Group("infersight-slo", cfg.interval, tuple(rules)) if rules else None), have


def _seconds(duration: str) -> float:
    from infersight.timeparse import parse_duration

    return parse_duration(duration)
