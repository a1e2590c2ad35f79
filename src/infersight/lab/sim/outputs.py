"""Writing a run out: a bundle (frame + truth.json), OpenMetrics text, and the CLI hook."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from infersight.lab.sim.dialects import DIALECTS, emit
from infersight.lab.sim.run import Progress, SimResult, simulate

TRUTH_ARTIFACT = "truth.json"


def write_sim_bundle(res: SimResult, path: str | Path, overwrite: bool = False) -> Path:
    """The canonical frame as the bundle's incident window, the ground truth as `truth.json`."""
    from infersight.bundle import write_bundle

    truth = json.dumps(res.truth.to_dict(), indent=2, sort_keys=True).encode("utf-8")
    return write_bundle(
        path,
        windows={"incident": res.frame},
        source={"kind": "simulator", "scenario": res.truth.scenario, "seed": str(res.truth.seed)},
        artifacts={TRUTH_ARTIFACT: truth},
        overwrite=overwrite,
    )


def write_sim_openmetrics(
    res: SimResult, path: str | Path, dialect: str = "vllm", vector_db: str | None = None
) -> int:
    """The run as timestamped OpenMetrics text (for `promtool tsdb create-blocks-from`)."""
    from infersight.sources.openmetrics_writer import write_openmetrics

    return write_openmetrics(emit(res, dialect, vector_db), str(path))


def run_cli(
    scenario: str,
    hours: float,
    instances: int,
    seed: int,
    dialect: str | None,
    out: str | Path,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """What `infersight lab sim` does: simulate, then write `out`.

    `dialect` None (or "canonical") writes a bundle (`out` a directory or .tar.gz); a dialect
    name (vllm, triton, tgi, native) writes OpenMetrics text to `out`. Returns a summary.
    """
    res = simulate(scenario, hours=hours, instances=instances, seed=seed, progress=progress)
    target = Path(out)
    if dialect in (None, "canonical"):
        written = write_sim_bundle(res, target, overwrite=True)
        samples = res.frame.points()
    elif dialect in DIALECTS:
        samples = write_sim_openmetrics(res, target, dialect)
        written = target
    else:
        raise ValueError(f"unknown dialect {dialect!r}; choose canonical or one of {DIALECTS}")
    if progress:
        progress("written", 1.0)
    return {
        "out": str(written),
        "samples": samples,
        "signals": len(res.frame.signals),
        "instances": len(res.frame.instances),
        "truth": res.truth.to_dict(),
    }
