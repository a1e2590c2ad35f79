"""Writing a run out: a bundle (frame + truth.json), OpenMetrics text, and the CLI hook."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from infersight.frame import MetricFrame
from infersight.lab.sim.dialects import DIALECTS, STACKS, emit
from infersight.lab.sim.run import Progress, SimResult, simulate
from infersight.lab.sim.scenarios import check_applies
from infersight.safe_write import write_text
from infersight.units import format_value
from infersight.windows import cut_windows

TRUTH_ARTIFACT = "truth.json"
OPENMETRICS_SUFFIXES = (".om", ".prom", ".txt")


def sim_frame(res: SimResult, dialect: str = "canonical") -> MetricFrame:
    """The run as users would see it: the model's own signals (`canonical`), or the run emitted
    in an exporter dialect and mapped back through the catalog, exactly as an import would."""
    if dialect == "canonical":
        return res.frame
    from infersight.exporters import load_catalog
    from infersight.sources.local import canonical_frame

    raw = emit(res, dialect)
    return canonical_frame(raw, load_catalog(), float(res.times[0]), float(res.times[-1]),
                           res.step).frame  # fmt: skip


def incident_end(res: SimResult, after_onset_s: float = 1800.0) -> float:
    """Where an on-call engineer would look: half an hour after the onset, or the run's end."""
    last = float(res.times[-1])
    if res.truth.onset is None:
        return last
    step = res.step
    end = min(res.truth.onset + after_onset_s, last)
    return float(np.floor(end / step) * step)


#: what a window's mapping reads before its first point: the longest range in the catalog's
#: PromQL (15m) and the lookback of an instant selector (5m), with room to spare
LOOKBACK_S = 1800.0


def sim_windows(
    res: SimResult, dialect: str, end: float, length_s: float
) -> dict[str, MetricFrame]:
    """The incident window and the baselines the run covers, each mapped from its own slice of
    the run (with LOOKBACK_S before it): the same frames as cutting them from `sim_frame` of the
    whole run, without ever holding the whole run's exporter samples. `canonical`: cut from
    the run's own frame."""
    if dialect == "canonical":
        return cut_windows(res.frame, end, length_s)
    from infersight.exporters import load_catalog
    from infersight.sources.local import canonical_frame
    from infersight.windows import DEFAULT_BASELINES, INCIDENT, baseline_name

    catalog, step = load_catalog(), res.step
    first = float(res.times[0])
    out: dict[str, MetricFrame] = {}
    start = end - length_s
    for name, shift in [(INCIDENT, 0.0), *((baseline_name(s), s) for s in DEFAULT_BASELINES)]:
        lo, hi = start - shift, end - shift
        if lo < first - 1e-6:
            continue  # a baseline the run does not reach is left out, as cut_windows does
        part = res.window(max(lo - LOOKBACK_S, first), hi)
        raw = emit(part, dialect)
        t0, t1 = float(part.times[0]), float(part.times[-1])
        frame = canonical_frame(raw, catalog, t0, t1, step).frame
        del raw
        w = frame.slice_time(lo, hi)
        out[name] = MetricFrame(w.start, w.step, w.n, dict(w.series))
    return out


def write_sim_bundle(
    res: SimResult,
    path: str | Path,
    dialect: str = "canonical",
    window_s: float = 3600.0,
    overwrite: bool = False,
) -> Path:
    """A bundle shaped like `infersight pull`'s: the incident window and the baselines the run
    covers, with the ground truth as the `truth.json` artifact. Each window is emitted and
    mapped on its own (`sim_windows`), so a large fleet's day of history is never held as
    exporter samples all at once."""
    return _write_bundle(res, path, dialect, window_s, overwrite)[0]


def _write_bundle(
    res: SimResult, path: str | Path, dialect: str, window_s: float, overwrite: bool
) -> tuple[Path, dict[str, MetricFrame]]:
    from infersight.bundle import write_bundle

    end = incident_end(res)
    windows = sim_windows(res, dialect, end, min(window_s, end - float(res.times[0])))
    truth = json.dumps(res.truth.to_dict(), indent=2, sort_keys=True).encode("utf-8")
    artifacts = {TRUTH_ARTIFACT: truth}
    source = {
        "kind": "simulator",
        "scenario": res.truth.scenario,
        "seed": str(res.truth.seed),
        "dialect": dialect,
    }
    if dialect in STACKS:  # a cluster: its pods and what changed in the incident window
        artifacts.update(cluster_artifact(res, dialect, end - min(window_s, end - res.t0), end))
        source["families"] = "kube_state_metrics"  # what reveals the stack to the runbooks
    written = write_bundle(
        path,
        windows=windows,
        source=source,
        artifacts=artifacts,
        overwrite=overwrite,
    )
    return written, windows


def cluster_artifact(res: SimResult, dialect: str, start: float, end: float) -> dict[str, bytes]:
    """The `cluster.json` of a cluster's window: its pods and what changed in it, read from the
    window's slice of the run (with LOOKBACK_S before it) as `infersight pull` reads them."""
    from infersight.kube.artifact import ARTIFACT, to_artifact
    from infersight.kube.read import from_store
    from infersight.sources.local import pods_of

    part = res.window(max(start - LOOKBACK_S, res.t0), end)
    raw = emit(part, dialect)
    pods = pods_of(raw, start, end)
    return {ARTIFACT: to_artifact(pods, from_store(raw, start, end, res.step, pods))}


def write_sim_openmetrics(
    res: SimResult,
    path: str | Path,
    dialect: str = "vllm",
    vector_db: str | None = None,
    overwrite: bool = True,
    announce: Callable[[int, int], None] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> int:
    """The run as timestamped OpenMetrics text (for `promtool tsdb create-blocks-from`).
    `announce` hears (samples, about how many bytes) before a byte is written, `progress`
    (samples written, samples in all) as it goes: a day of a fleet is gigabytes."""
    from infersight.sources.openmetrics_writer import (
        estimated_bytes,
        store_samples,
        write_openmetrics,
    )

    store = emit(res, dialect, vector_db)
    if announce:
        announce(store_samples(store), estimated_bytes(store))
    return write_openmetrics(store, str(path), overwrite=overwrite, progress=progress)


def truth_beside(target: Path) -> Path:
    """Where the ground truth of a run written as OpenMetrics text goes: `x.om` → `x.truth.json`
    (a text file has no artifacts to hold it, as a bundle does)."""
    return target.with_name(target.stem + ".truth.json")


def check_out(target: Path, text: bool, overwrite: bool) -> None:
    """Refuse an output path before simulating: an existing one without `overwrite`
    (FileExistsError), a missing or read-only folder, or anything but a regular file or a bundle
    (a device, FIFO, symlink or someone's folder: OutputError / BundleError)."""
    from infersight.bundle import check_target
    from infersight.safe_write import check_output, existing

    if not overwrite and existing(target) is not None:
        raise FileExistsError(f"{target} exists; pass --overwrite to replace it")
    if text:
        check_output(target, "file", overwrite)
        truth = truth_beside(target)
        if not overwrite and existing(truth) is not None:
            raise FileExistsError(f"{truth} (its ground truth) exists; pass --overwrite")
        check_output(truth, "file", overwrite)
    else:
        check_target(target, overwrite)


def run_cli(
    scenario: str,
    hours: float,
    instances: int,
    seed: int,
    dialect: str,
    out: str | Path,
    progress: Progress | None = None,
    overwrite: bool = False,
    history_h: float = 0.0,
    announce: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """What `infersight lab sim` does: simulate, then write `out`.

    `out` ending in .om/.prom/.txt gets OpenMetrics text in `dialect` (for promtool backfill)
    and its ground truth beside it (`truth_beside`); anything else is a bundle (a directory, or
    .tar.gz) of the dialect mapped back to signals, the truth inside it. `announce` hears what
    will be written before it is (the text's size); `progress` the stages, writing included.
    """
    if dialect != "canonical" and dialect not in DIALECTS and dialect not in STACKS:
        choices = ", ".join((*DIALECTS, *STACKS))
        raise ValueError(f"unknown dialect {dialect!r}; choose canonical or one of {choices}")
    check_applies(scenario, dialect)
    target = Path(out)
    text = target.suffix in OPENMETRICS_SUFFIXES
    if text and dialect == "canonical":
        raise ValueError("OpenMetrics output needs an exporter dialect (--dialect vllm, ...)")
    check_out(target, text, overwrite)
    res = simulate(scenario, hours, instances, seed, progress=progress, history_h=history_h)
    truth_at = ""
    if text:

        def told(samples: int, size: int) -> None:
            if announce:
                announce(
                    f"writing {samples:,} samples to {target} (about {format_value(size, 'bytes')})"
                )

        def wrote(done: int, total: int) -> None:
            if progress:
                progress("writing", done / total if total else 1.0)

        samples = write_sim_openmetrics(res, target, dialect, overwrite=overwrite,
                                        announce=told, progress=wrote)  # fmt: skip
        truth = truth_beside(target)
        write_text(truth, json.dumps(res.truth.to_dict(), indent=2, sort_keys=True) + "\n",
                   overwrite=overwrite)  # fmt: skip
        written, shown, truth_at = target, res.frame, str(truth)
    else:
        written, windows = _write_bundle(res, target, dialect, 3600.0, overwrite)
        samples = sum(w.points() for w in windows.values())
        shown = windows["incident"]
    if progress:
        progress("written", 1.0)
    return {
        "out": str(written),
        # where the ground truth went: a file beside OpenMetrics text, the bundle's artifact
        "truth_file": truth_at or f"{written}: {TRUTH_ARTIFACT}",
        "samples": samples,
        "signals": len(shown.signals),
        "instances": len(shown.instances),
        "truth": res.truth.to_dict(),
    }
