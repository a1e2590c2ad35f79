"""Backtest the rendered rules on simulated incidents in a real Prometheus.

A scenario is simulated with a day of history before it, written as one exporter dialect's
OpenMetrics, backfilled with promtool into a Prometheus started for the purpose; the rules are
rendered for the exporters that Prometheus is found to hold, loaded into it (a failed load is
an error), and replayed over the run. What fired is compared with what the scenario should
fire: its own alert, and the consequences the seed says it drags along.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from pydantic import BaseModel, ConfigDict

from infersight.alerts.render import ALERTS_FILE, RECORDING_FILE, RuleSet, build, write
from infersight.alerts.replay import Firing, replay
from infersight.exporters import load_catalog
from infersight.lab.live.servers import LocalPrometheus
from infersight.lab.sim.outputs import write_sim_openmetrics
from infersight.lab.sim.run import SimResult, simulate
from infersight.sources.prometheus import PrometheusClient

#: what an overloaded service shows: slow, failing, its queue holding memory
_OVERLOAD = frozenset({
    "InferLatencyP99Deviation", "InferTTFTP99Deviation", "InferErrorBudgetBurn",
    "InferLatencyBudgetBurn", "InferVRAMExhaustionAhead", "InferQueueGrowingGPUIdle",
})  # fmt: skip
#: scenario -> (alerts it must fire, alerts its consequences may fire). A scenario not listed
#: may fire nothing: a healthy day, or a cause no alert of this set is about.
EXPECTED: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "vector_db_swap": (
        frozenset({"InferVectorQueryP99Deviation"}),
        frozenset({"InferLatencyP99Deviation", "InferTTFTP99Deviation",
                   "InferLatencyBudgetBurn", "InferQueueGrowingGPUIdle"}),
    ),
    "cache_capacity": (frozenset({"InferCacheHitCollapse"}), frozenset()),
    "vram_leak": (
        frozenset({"InferVRAMExhaustionAhead"}),
        frozenset({"InferErrorBudgetBurn"}),
    ),
    "gpu_hardware_fault": (frozenset({"InferGPUXidError"}), frozenset({"InferErrorBudgetBurn"})),
    "gpu_thermal_throttling": (
        frozenset({"InferGPUClockThrottled"}),
        frozenset({"InferLatencyP99Deviation", "InferTTFTP99Deviation"}),
    ),
    # causes no alert names, whose symptoms the alerts do see: the night's P50 and P99 over
    # a batch window that never fills (§3.1; the batch wait has no metric in vLLM), requests
    # piling up with their memory (§5: VRAM filled by the queue's intermediate state), a
    # second process's memory on the card
    "batch_window_starvation": (
        frozenset(),
        frozenset({"InferLatencyP99Deviation", "InferBatchFillWaitDeviation"}),
    ),
    "unbounded_queue": (frozenset(), _OVERLOAD),
    "traffic_surge": (frozenset(), _OVERLOAD),
    "shared_gpu_contention": (frozenset(), frozenset({"InferVRAMExhaustionAhead"})),
    "incident_0217": (
        frozenset({"InferVectorQueryP99Deviation", "InferCacheHitCollapse",
                   "InferQueueGrowingGPUIdle", "InferLatencyP99Deviation"}),
        frozenset({"InferTTFTP99Deviation", "InferVRAMExhaustionAhead",
                   "InferErrorBudgetBurn", "InferLatencyBudgetBurn"}),
    ),
}  # fmt: skip
HEALTHY = ("healthy_diurnal", "healthy_flat", "healthy_spiky")
#: causes that only happen under the day's load (a hot inlet throttles a working GPU): their
#: runs start at 08:00 UTC so the hours after the day of history are busy ones
DAYTIME = frozenset({"gpu_thermal_throttling"})
DAY_START_S = 1_748_736_000.0 + 8 * 3600.0  # 2025-06-01 08:00 UTC


class BacktestConfig(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    #: fault-free hours before the run: the day the `offset 1d` baselines read, plus the hour
    #: the previous-hour baseline reads
    history_h: float = 25.0
    hours: float = 6.0
    instances: int = 3
    #: the simulator's step; one reading a minute, the rules' evaluation interval
    step_s: float = 60.0
    dialect: str = "vllm"


@dataclass(frozen=True)
class Outcome:
    scenario: str
    seed: int
    onset: float | None
    start: float
    end: float
    fired: dict[str, float]  # alert -> first firing time
    expected: frozenset[str]
    allowed: frozenset[str]
    firings: list[Firing] = field(default_factory=list)

    @property
    def missed(self) -> list[str]:
        return sorted(self.expected - set(self.fired))

    @property
    def unexpected(self) -> list[str]:
        return sorted(set(self.fired) - self.expected - self.allowed)

    def to_dict(self) -> dict[str, Any]:
        return {
            "scenario": self.scenario,
            "seed": self.seed,
            "fired": sorted(self.fired),
            "missed": self.missed,
            "unexpected": self.unexpected,
        }


def load_rules(prom: LocalPrometheus, folder: Path) -> None:
    """Point the running Prometheus at the rule files and reload; its own verdict on them is
    the check (a rule it cannot load leaves the reload failing, with the reason)."""
    text = prom.config_file.read_text("utf-8")
    files = [str(folder / RECORDING_FILE), str(folder / ALERTS_FILE)]
    prom.config_file.write_text(text + "rule_files:\n" + "".join(f"  - {f}\n" for f in files))
    with httpx.Client(base_url=prom.url, timeout=60.0, trust_env=False) as http:
        r = http.post("/-/reload")
        if r.status_code != 200:
            raise RuntimeError(f"Prometheus refused the rules: {r.text.strip()}")
        groups = http.get("/api/v1/rules").json()["data"]["groups"]
    loaded = {g["name"] for g in groups}
    want = {"infersight-signals", "infersight-alerts"}
    if not want <= loaded:
        raise RuntimeError(f"Prometheus loaded groups {sorted(loaded)}, not {sorted(want)}")


def detected_rules(client: PrometheusClient, start: float, end: float) -> RuleSet:
    """Rules for the exporter families the server holds, as `alerts render -p` makes them."""
    catalog = load_catalog()
    names = set(client.metric_names(start, end))
    return build(catalog.detect(names), names)


def run_scenario(
    scenario: str,
    seed: int,
    cfg: BacktestConfig | None = None,
    workdir: Path | None = None,
    progress: Callable[[str], None] | None = None,
) -> Outcome:
    cfg = cfg or BacktestConfig()
    say = progress or (lambda _m: None)
    res = simulate(
        scenario,
        cfg.hours,
        cfg.instances,
        seed,
        step=cfg.step_s,
        history_h=cfg.history_h,
        start=DAY_START_S if scenario in DAYTIME else None,
    )
    with tempfile.TemporaryDirectory(prefix="infersight-backtest.", dir=workdir) as tmp:
        data = Path(tmp) / "run.om"
        say(f"{scenario}: writing OpenMetrics")
        write_sim_openmetrics(res, data, cfg.dialect)
        say(f"{scenario}: backfilling Prometheus")
        with LocalPrometheus(backfill=[data], extra_args=["--web.enable-lifecycle"]) as prom:
            data.unlink()
            return _replay_in(prom, res, scenario, seed, cfg, Path(tmp), say)


def _replay_in(
    prom: LocalPrometheus,
    res: SimResult,
    scenario: str,
    seed: int,
    cfg: BacktestConfig,
    tmp: Path,
    say: Callable[[str], None],
) -> Outcome:
    client = PrometheusClient(prom.url, timeout=300.0)
    first, last = float(res.times[0]), float(res.times[-1])
    rules = detected_rules(client, first, last)
    write(rules, tmp / "rules", overwrite=True)
    load_rules(prom, tmp / "rules")
    start = first + cfg.history_h * 3600.0
    say(f"{scenario}: replaying {len(rules.alerts)} alerts")
    firings = replay(client, rules.recording, rules.alerting, start, last)
    fired: dict[str, float] = {}
    for f in firings:
        fired.setdefault(f.alert, f.since)
    must, may = EXPECTED.get(scenario, (frozenset(), frozenset()))
    return Outcome(scenario, seed, res.truth.onset, start, last, fired, must, may, firings)
