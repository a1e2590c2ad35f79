"""A simulated 02:17 incident that is happening now: its history ends at the current minute, so
a real Prometheus backfilled with it answers (and evaluates rules) as during the incident."""

from __future__ import annotations

import time
from pathlib import Path

from infersight.lab.sim.outputs import write_sim_openmetrics
from infersight.lab.sim.run import simulate

STEP = 15.0


def incident_now_onset(folder: Path, hours: float = 3.0) -> tuple[Path, float, float]:
    """(OpenMetrics file of the vLLM fleet, the run's last timestamp ≈ now, the fault's onset)."""
    end = (time.time() // STEP) * STEP
    res = simulate("incident_0217", hours=hours, instances=3, seed=4, start=end - hours * 3600)
    assert res.truth.onset is not None and res.truth.onset < end - 600
    om = folder / "incident-now.om"
    write_sim_openmetrics(res, om, "vllm")
    return om, end, res.truth.onset


def incident_now(folder: Path, hours: float = 3.0) -> tuple[Path, float]:
    """(OpenMetrics file of the vLLM fleet, the run's last timestamp ≈ now)."""
    om, end, _onset = incident_now_onset(folder, hours)
    return om, end
