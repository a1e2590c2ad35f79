"""Entry points: simulate a scenario, list scenarios, write a bundle or OpenMetrics text."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from infersight.frame import MetricFrame
from infersight.lab.sim.canonical import Tables, build_frame, node_names
from infersight.lab.sim.config import FleetConfig
from infersight.lab.sim.context import Ctx
from infersight.lab.sim.drivers import FloatArray, apply_spread, default_drivers, draw_spread
from infersight.lab.sim.knobs import Exposure, Variation
from infersight.lab.sim.latency import e2e_table, make_draws, vector_table
from infersight.lab.sim.model import Trace, run_model
from infersight.lab.sim.scenarios import SCENARIOS, get_scenario
from infersight.lab.sim.traffic import DAY, fleet_demand
from infersight.lab.sim.truth import GroundTruth
from infersight.limits import LimitExceeded, Limits, current
from infersight.sources.raw import RawStore

#: 2025-06-02 00:00 UTC, a Monday: runs start at a midnight unless told otherwise
#: peak memory of one simulated point (an instance at a time step), from bench/sim_memory.py:
#: 6.66 GiB for 1,000 instances × 6,241 points, where the fixed part is small
BYTES_PER_POINT = 1_150
BASE_START = 1748822400.0

Progress = Callable[[str, float], None]


@dataclass(frozen=True)
class SimResult:
    """A run: the model's trace and latency tables, and (built on first use, as it is the
    largest part) its canonical frame. Exporter dialects read the trace, never the frame, so a
    bundle in a dialect is written without the frame ever being built."""

    truth: GroundTruth
    config: FleetConfig
    trace: Trace
    tables: Tables
    times: FloatArray
    step: float
    #: the knobs the run was made with (the suite's run: the defaults)
    variation: Variation = field(default_factory=Variation)
    #: the run's first time when this is a window of it (`window`); None: the run itself
    origin: float | None = None
    _frame: MetricFrame | None = field(default=None, repr=False, compare=False)

    @property
    def frame(self) -> MetricFrame:
        """The model's own signals on the run's grid (built once, when first asked for)."""
        if self._frame is None:
            frame = build_frame(self.trace, self.tables, self.config, float(self.times[0]),
                                self.step)  # fmt: skip
            object.__setattr__(self, "_frame", frame)
            return frame
        return self._frame

    @property
    def t0(self) -> float:
        """When the run began: process start times and the scrape grid count from here."""
        return float(self.times[0]) if self.origin is None else self.origin

    def window(self, start: float, end: float) -> SimResult:
        """The part of the run with start <= t <= end, as a run of its own that remembers when
        the whole began: exporters emitted from it give the same rates, gauges and scrape grid
        as from the whole run over those times, with a fraction of the memory."""
        tol = 1e-3 * self.step  # times are epoch seconds: 1e-9 is below their ulp
        lo = int(np.searchsorted(self.times, start - tol, side="left"))
        hi = int(np.searchsorted(self.times, end + tol, side="right"))
        cut = slice(lo, hi)
        trace = Trace(
            inst={k: v[cut] for k, v in self.trace.inst.items()},
            fleet={k: v[cut] for k, v in self.trace.fleet.items()},
        )
        tables = Tables(self.tables.e2e[cut], self.tables.vector[cut])
        # a frame already built is cut (its windowed counts then match the whole run's); else
        # the window builds its own when asked
        frame = (
            None
            if self._frame is None
            else self._frame.slice_time(float(self.times[lo]), float(self.times[hi - 1]))
        )
        return SimResult(self.truth, self.config, trace, tables, self.times[cut], self.step,
                         self.variation, self.t0, frame)  # fmt: skip

    def raw(
        self, dialect: str = "vllm", vector_db: str | None = None, exposure: Exposure | None = None
    ) -> RawStore:
        """The same run as raw exporter samples in a dialect (see dialects.DIALECTS), scraped
        and relabelled as `exposure` says (default: every exporter, every step, real names)."""
        from infersight.lab.sim.dialects import emit

        return emit(self, dialect, vector_db, exposure)


def list_scenarios() -> list[dict[str, Any]]:
    """Every scenario: name, roots, layer, seed section and one-line description."""
    return [s.to_dict() for s in SCENARIOS.values()]


def _default_start(anchor: float | None, hours: float, step: float, at: float = 0.7) -> float:
    """Midnight, or for an onset anchored at an hour of day: a start that puts that hour of the
    second day at fraction `at` of the run."""
    if anchor is None:
        return BASE_START
    onset = BASE_START + DAY + anchor * 3600.0
    start = onset - at * hours * 3600.0
    return float(np.floor(start / step) * step)


def check_size(instances: int, n: int, limits: Limits) -> None:
    """LimitExceeded (one line, with the memory it would take) past `limits.sim_points`."""
    points = instances * n
    if points > limits.sim_points:
        gib = points * BYTES_PER_POINT / 2**30
        raise LimitExceeded(
            f"{instances:,} instances × {n:,} time points is {points:,} points to simulate "
            f"(about {gib:,.1f} GiB of memory), over the {limits.sim_points:,}-point limit; use "
            f"fewer instances or a shorter --duration/--history, or "
            f"{limits.hint('sim_points', flag=False)}"
        )


def simulate(
    scenario: str,
    hours: float = 26.0,
    instances: int = 16,
    seed: int = 0,
    step: float = 15.0,
    start: float | None = None,
    progress: Progress | None = None,
    history_h: float = 0.0,
    variation: Variation | None = None,
    limits: Limits | None = None,
) -> SimResult:
    """Run the fleet through `scenario`; same arguments, same result.

    `history_h` prepends that many fault-free hours, so that a 1 h incident window has the
    same window a day earlier as a baseline (history_h=25) however the fault is placed.
    `variation` scales the fault, moves its onset to night or day (the run's start moves so
    the band lies inside it) or the noise; the default leaves the run as it was. A run of more
    points (instances × time steps) than `limits.sim_points` (default: `limits.current()`) is
    refused with LimitExceeded before anything is allocated.
    """
    if hours <= 0 or instances < 1 or step <= 0 or history_h < 0:
        raise ValueError("hours and step must be positive, history_h >= 0, instances >= 1")
    var = variation or Variation()
    sc = get_scenario(scenario)
    cfg = dataclasses.replace(FleetConfig(), **dict(sc.config))
    if var.noise != 1.0:
        cfg = dataclasses.replace(
            cfg, jitter=cfg.jitter * var.noise, arrival_noise=cfg.arrival_noise * var.noise
        )
    band = var.band()
    if start is not None:
        t0 = float(start)
    elif band is not None:
        t0 = _default_start((band[0] + band[1]) / 2.0, hours, step, var.band_at)
    else:
        t0 = _default_start(sc.anchor_hour, hours, step)
    first = round(history_h * 3600.0 / step)
    t0 -= first * step
    n = first + int(hours * 3600.0 / step) + 1
    check_size(instances, n, limits or current())
    ts = t0 + step * np.arange(n, dtype=np.float64)
    rng = np.random.default_rng(seed)
    # the first four streams are as they were before the fleet got its spread
    traffic_rng, fault_rng, model_rng, draw_rng, spread_rng, noise_rng = rng.spawn(6)
    demand = fleet_demand(ts, instances, cfg, traffic_rng)
    drv = default_drivers(cfg, n, instances)
    nodes = node_names(instances)
    ctx = Ctx(cfg, drv, ts, step, fault_rng, nodes, first, var.magnitude, band, var.band_run_part)
    effect = sc.fault(ctx)
    spread = draw_spread(cfg, instances, spread_rng)
    apply_spread(drv, spread)
    if progress:
        progress("model", 0.1)
    trace = run_model(cfg, drv, demand, step, model_rng, spread, noise_rng)
    if progress:
        progress("latency", 0.7)
    draws = make_draws(draw_rng)
    e2e = e2e_table(trace, cfg, draws)
    e2e[trace.inst["finished"] <= 0] = np.nan
    tables = Tables(e2e, vector_table(trace, draws))
    if progress:
        progress("done", 1.0)
    truth = GroundTruth(
        scenario=sc.name,
        roots=sc.roots,
        layer=sc.layer,
        onset=None if effect.onset is None else float(ts[effect.onset]),
        end=None if effect.end is None else float(ts[effect.end]),
        instances=tuple(effect.instances),
        seed_section=sc.seed_section,
        description=sc.description,
        contributing=sc.contributing,
        params={k: float(v) for k, v in effect.params.items()},
        seed=seed,
    )
    return SimResult(truth, cfg, trace, tables, ts, step, var)
