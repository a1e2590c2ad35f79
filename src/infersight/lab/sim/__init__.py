"""A fast, seeded simulation of an AI inference fleet whose metrics come from mechanisms.

`simulate(scenario, hours, instances, seed)` returns the canonical MetricFrame, the ground
truth, and `raw(dialect)` for the same run as exporter metrics. See docs/simulator.md.
"""

from infersight.lab.sim.run import SimResult, list_scenarios, simulate
from infersight.lab.sim.truth import GroundTruth

__all__ = ["GroundTruth", "SimResult", "list_scenarios", "simulate"]
