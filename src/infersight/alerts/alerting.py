"""Alerting rules over the recorded signals (seed §6.1).

Soft signals alert on their deviation from the same time yesterday AND from the previous hour
(so a normal evening rise, which yesterday also had, and a slow drift, which the last hour
also had, page no one), past an absolute floor and for a while. Around them, the patterns the
seed names: VRAM heading for full (`predict_linear`), GPU clocks held down or an Xid, and a
queue growing while the GPUs idle (not a compute shortage, seed §2.2).
"""

from __future__ import annotations

from infersight.alerts.annotations import notes, queried, value
from infersight.alerts.config import AlertsConfig, Deviation
from infersight.alerts.rules import Group, Rule, recorded
from infersight.signals import get_signal


def day(cfg: AlertsConfig, series: str) -> str:
    return f"avg_over_time({series}[{cfg.day_range}] offset {cfg.day_offset})"


def hour(cfg: AlertsConfig, series: str) -> str:
    return f"avg_over_time({series}[{cfg.hour_range}] offset {cfg.hour_offset})"


def deviation_rule(d: Deviation, cfg: AlertsConfig) -> Rule:
    sig = get_signal(d.signal)
    s = recorded(d.signal)
    up = sig.bad != "down"
    op, factor = (">", 1 + d.ratio) if up else ("<", 1 - d.ratio)
    expr = (
        f"({s} {op} {factor:g} * {day(cfg, s)})"
        f" and ({s} {op} {factor:g} * {hour(cfg, s)})"
        f" and ({s} {op} {d.floor:g})"
    )
    sel = s + '{instance="%s"}'
    way, past = ("up", "above") if up else ("down", "below")
    summary = (
        f"{d.what} on {{{{ $labels.instance }}}} is {value(d.signal)}: "
        f"{queried(day(cfg, sel), d.signal)} at this time yesterday, "
        f"{queried(hour(cfg, sel), d.signal)} the previous hour "
        f"({d.ratio:.0%} {way} from both, {past} {d.floor:g})"
    )
    return Rule(
        expr=expr,
        alert=d.alert,
        for_=d.for_,
        labels={"severity": "warning", "layer": sig.layer.value, "signal": d.signal},
        annotations=notes(summary, d.rule, d.runbook, cfg),
    )


def vram_rule(cfg: AlertsConfig) -> Rule:
    sig = "inference.gpu_mem_used_ratio"
    s = recorded(sig)
    hours = cfg.vram_horizon_s / 3600
    expr = (
        f"({s} > {cfg.vram_floor:g})"
        f" and (predict_linear({s}[{cfg.vram_fit}], {cfg.vram_horizon_s}) > {cfg.vram_full:g})"
    )
    summary = (
        f"GPU memory on {{{{ $labels.instance }}}} is {value(sig)} used and its trend over "
        f"{cfg.vram_fit} reaches {cfg.vram_full:.0%} within {hours:g}h (a leak, or no headroom)"
    )
    return Rule(
        expr=expr,
        alert="InferVRAMExhaustionAhead",
        for_=cfg.vram_for,
        labels={"severity": "warning", "layer": "inference", "signal": sig},
        annotations=notes(summary, "vram_exhaustion_ahead", "rolling-restart", cfg),
    )


def throttle_rule(cfg: AlertsConfig) -> Rule:
    flag, clock, temp = (
        recorded("infra.gpu_throttle"),
        recorded("infra.gpu_sm_clock_mhz"),
        recorded("infra.gpu_temp_c"),
    )
    keep = 1 - cfg.clock_drop_ratio
    expr = (
        f"max by (host) ({flag} > 0)"
        f" or (max by (host) ({clock} < {keep:g} * {day(cfg, clock)})"
        f" and on(host) max by (host) ({clock} < {keep:g} * {hour(cfg, clock)})"
        f" and on(host) max by (host) ({temp} > {cfg.hot_c:g}))"
    )
    summary = (
        "GPU clocks held down on {{ $labels.host }}: SM clock "
        + queried(f'min({clock}{{host="%s"}})', "infra.gpu_sm_clock_mhz", "host")
        + " MHz at "
        + queried(f'max({temp}{{host="%s"}})', "infra.gpu_temp_c", "host")
        + " °C (thermal or power slowdown)"
    )
    return Rule(
        expr=expr,
        alert="InferGPUClockThrottled",
        for_=cfg.throttle_for,
        labels={"severity": "warning", "layer": "infrastructure", "signal": "infra.gpu_throttle"},
        annotations=notes(summary, "gpu_thermal_throttling", "drain-node", cfg),
    )


def xid_rule(cfg: AlertsConfig) -> Rule:
    s = recorded("infra.gpu_xid")
    summary = (
        "GPU on {{ $labels.host }} reported Xid {{ $value }} in the last "
        f"{cfg.xid_window} (a driver-reported hardware or driver fault)"
    )
    return Rule(
        expr=f"max by (host) (max_over_time({s}[{cfg.xid_window}])) > 0",
        alert="InferGPUXidError",
        labels={"severity": "page", "layer": "infrastructure", "signal": "infra.gpu_xid"},
        annotations=notes(summary, "gpu_hardware_fault", "drain-node", cfg),
    )


def queue_idle_rule(cfg: AlertsConfig) -> Rule:
    # smoothed over the last `queue_smooth`: a queue that fills and drains in turn (requests
    # shed, an engine crashing) is still a queue, and must not restart the `for:` clock
    w = cfg.queue_smooth
    q = f"sum by (host) (max_over_time({recorded('service.queue_length')}[{w}]))"
    g = f"avg by (host) (avg_over_time({recorded('inference.gpu_util')}[{w}]))"
    qd = f"sum by (host) ({day(cfg, recorded('service.queue_length'))})"
    qh = f"sum by (host) ({hour(cfg, recorded('service.queue_length'))})"
    gd = f"avg by (host) ({day(cfg, recorded('inference.gpu_util'))})"
    expr = (
        f"({q} > {cfg.queue_floor:g})"
        f" and ({q} > {cfg.queue_ratio:g} * {qd})"
        f" and ({q} > {cfg.queue_ratio:g} * {qh})"
        f" and on(host) ({g} < {1 - cfg.gpu_drop_ratio:g} * {gd})"
    )
    gsel = recorded("inference.gpu_util") + '{host="%s"}'
    summary = (
        "Queue on {{ $labels.host }} at {{ $value | humanize }} requests while its GPUs are "
        + queried(f"avg({gsel})", "inference.gpu_util", "host")
        + " busy (yesterday "
        + queried(f"avg({day(cfg, gsel)})", "inference.gpu_util", "host")
        + "): requests are not reaching the GPU; look at VRAM, batching and dependencies"
    )
    return Rule(
        expr=expr,
        alert="InferQueueGrowingGPUIdle",
        for_=cfg.queue_for,
        labels={"severity": "page", "layer": "service", "signal": "service.queue_length"},
        annotations=notes(summary, "gpu_util_low", "", cfg),
    )


def alert_group(covered: set[str], cfg: AlertsConfig) -> tuple[Group, list[str]]:
    """The alerts whose signals are all recorded; and, for each left out, why."""
    rules: list[Rule] = []
    skipped: list[str] = []

    def need(name: str, *signals: str) -> bool:
        missing = [s for s in signals if s not in covered]
        if missing:
            skipped.append(f"{name}: no exporter provides {', '.join(missing)}")
        return not missing

    for d in cfg.deviations:
        if need(d.alert, d.signal):
            rules.append(deviation_rule(d, cfg))
    if need("InferVRAMExhaustionAhead", "inference.gpu_mem_used_ratio"):
        rules.append(vram_rule(cfg))
    if need("InferGPUClockThrottled", "infra.gpu_sm_clock_mhz", "infra.gpu_temp_c"):
        rules.append(throttle_rule(cfg))
    if need("InferGPUXidError", "infra.gpu_xid"):
        rules.append(xid_rule(cfg))
    if need("InferQueueGrowingGPUIdle", "service.queue_length", "inference.gpu_util"):
        rules.append(queue_idle_rule(cfg))
    return Group("infersight-alerts", cfg.interval, tuple(rules)), skipped
