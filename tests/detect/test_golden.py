"""Golden output of detect(): speed work on the detectors must not change what they find.

Each case runs `detect` on fixed inputs and compares `result.to_dict()` with the JSON saved in
tests/detect/golden/detect.json: strings, ints, bools and None exactly, floats within 1e-9
relative (NaN equals NaN), list order included (anomalies are sorted by score, so a change in
the last bits of a score could reorder ties — the comparison would show it).

Inputs are synthetic (tests/detect/synth.py, bench/detect_bench.py's generator) and a few
simulator runs. The simulator evolves on its own, so every case stores a fingerprint of its
input windows: a simulator case whose input changed is skipped (regenerate the golden file
deliberately), a synthetic one fails.

Regenerate — only when a change of detection behaviour is intended::

    .venv/bin/python tests/detect/test_golden.py --regen
"""

from __future__ import annotations

import hashlib
import json
import math
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from synth import START, FloatArray, diurnal, noisy, windows, with_step

from infersight.detect import detect
from infersight.frame import MetricFrame, SignalSeries

GOLDEN = Path(__file__).resolve().parent / "golden" / "detect.json"
REL_TOL = 1e-9

Case = tuple[dict[str, MetricFrame], dict[str, Any]]  # windows, detect() keyword arguments


# -- synthetic cases -------------------------------------------------------------------------


def _busy() -> Case:
    def stop(t: FloatArray, i: int) -> FloatArray:
        v = noisy(60.0)(t, i).copy()
        if i == 0:
            v[200:] = np.nan
        return v

    sig = {
        "service.e2e_latency_p99": noisy(0.2),
        "inference.gpu_mem_used_ratio": noisy(0.5, 0.01),
        "infra.gpu_temp_c": noisy(60.0),
        "custom.thing": noisy(5.0),
    }
    inc = {
        "service.e2e_latency_p99": with_step(noisy(0.2), 120, 2.0),
        "inference.gpu_mem_used_ratio": lambda t, i: 0.5 + 0.2 * (t - t[0]) / 3600,
        "infra.gpu_temp_c": stop,
        "custom.thing": with_step(noisy(5.0), 100, 3.0),
    }
    return windows(sig, instances=5, incident=inc), {}


def _mixed() -> Case:
    """Diurnal shapes, gaps, flat and all-NaN rows, zeros, 'both' signals, load signals, a
    leak in bytes and ratio (capacity from bytes / ratio), scrape target down, a series that
    stops and one that is gone, a baseline on another grid."""

    def gappy(level: float, seed: int) -> Callable[[FloatArray, int], FloatArray]:
        def gen(t: FloatArray, i: int) -> FloatArray:
            v = diurnal(t, level) * (1 + 0.03 * noisy(1.0, 1.0, seed)(t, i))
            rng = np.random.default_rng(i + 7 * seed)
            v[rng.random(t.size) < 0.1] = np.nan
            if i == 2:
                v[40:70] = np.nan
            return v

        return gen

    def flat(level: float) -> Callable[[FloatArray, int], FloatArray]:
        return lambda t, i: np.full(t.size, level if i != 3 else np.nan)

    def leak(t: FloatArray, i: int) -> FloatArray:
        base = 0.4 + 0.01 * noisy(1.0, 0.2, 3)(t, i)
        if i == 1:
            base = base + 0.3 * (t - t[0]) / 3600
        return base

    def leak_bytes(t: FloatArray, i: int) -> FloatArray:
        return leak(t, i) * 80 * 2**30

    def target(t: FloatArray, i: int) -> FloatArray:
        v = np.ones(t.size)
        if i == 4:
            v[150:] = 0.0
        return v

    def target_base(t: FloatArray, i: int) -> FloatArray:
        return np.ones(t.size)

    def stops(t: FloatArray, i: int) -> FloatArray:
        v = noisy(3.0)(t, i).copy()
        if i in (1, 5):
            v[180:] = np.nan
        return v

    def zeros(t: FloatArray, i: int) -> FloatArray:
        v = np.zeros(t.size)
        if i == 0:
            v[100:] = 0.05
        return v

    def signed(t: FloatArray, i: int) -> FloatArray:
        return -50.0 + noisy(5.0, 0.5, 9)(t, i)

    sig: dict[str, Callable[[FloatArray, int], FloatArray]] = {
        "service.e2e_latency_p50": gappy(0.1, 1),
        "access.request_rate": gappy(200.0, 2),
        "inference.gpu_util": gappy(0.6, 3),
        "service.error_ratio": flat(0.0),
        "infra.gpu_sm_clock_mhz": flat(1980.0),
        "inference.gpu_mem_used_ratio": leak,
        "inference.gpu_mem_used_bytes": leak_bytes,
        "infra.target_up": target_base,
        "infra.disk_util": stops,
        "service.restarts": zeros,
        "custom.signed": signed,
        "infra.nic_drops": noisy(0.5, 0.3, 4),
        "dependency.cache_hit_ratio": noisy(0.9, 0.02, 5),
    }
    inc = {
        "service.e2e_latency_p50": with_step(gappy(0.1, 1), 90, 3.0, only={0, 1, 2, 4, 5}),
        "access.request_rate": with_step(gappy(200.0, 2), 60, 0.3),
        "inference.gpu_util": with_step(gappy(0.6, 3), 200, 0.2, only={6}),
        "service.error_ratio": lambda t, i: np.where(t > t[0] + 2400, 0.08, 0.0),
        "infra.gpu_sm_clock_mhz": with_step(flat(1980.0), 160, 0.6, only={2}),
        "infra.target_up": target,
        "service.restarts": zeros,
        "custom.signed": with_step(signed, 120, 3.0, only={7}),
        "dependency.cache_hit_ratio": with_step(noisy(0.9, 0.02, 5), 150, 0.5),
    }
    w = windows(sig, instances=8, incident=inc)
    w["incident"] = _drop(w["incident"], "infra.nic_drops", keep=("node-0", "node-1", "node-2"))
    b = w["baseline-7d"]
    w["baseline-7d"] = MetricFrame(b.start, 30.0, b.n, b.series)
    return w, {}


def _drop(frame: MetricFrame, signal: str, keep: tuple[str, ...]) -> MetricFrame:
    s = frame.series[signal]
    rows = [s.instances.index(i) for i in keep]
    series = dict(frame.series)
    series[signal] = SignalSeries(keep, s.values[rows])
    return MetricFrame(frame.start, frame.step, frame.n, series)


def _no_baseline() -> Case:
    sig = {
        "service.e2e_latency_p99": noisy(0.3),
        "infra.gpu_temp_c": noisy(65.0, 0.02),
        "service.queue_length": noisy(20.0, 0.2),
    }
    inc = {
        "service.e2e_latency_p99": with_step(noisy(0.3), 150, 2.5, only={0}),
        "infra.gpu_temp_c": with_step(noisy(65.0, 0.02), 130, 1.3, only={0, 1, 2, 3, 4}),
        "service.queue_length": with_step(noisy(20.0, 0.2), 100, 4.0),
    }
    return windows(sig, instances=6, baselines=(), incident=inc), {}


def _two_days() -> Case:
    """Two days at 5 min and no baseline window: self-1h and self-1d from the incident."""
    n = 576

    def day(level: float) -> Callable[[FloatArray, int], FloatArray]:
        return lambda t, i: diurnal(t, level, 0.4) * (1 + noisy(1.0, 0.04, i)(t, i))

    def hot(t: FloatArray, i: int) -> FloatArray:
        v = day(0.25)(t, i)
        if i == 1:
            v[500:] *= 2.2
        return v

    w = windows(
        {"service.e2e_latency_p99": hot, "service.process_rss": day(4e9)},
        instances=4,
        n=n,
        step=300.0,
        baselines=(),
    )
    return w, {"at": START + 300.0 * 560}


def _peer_groups() -> Case:
    """Two models in one fleet; one slow node in each; given peer groups."""

    def fwd(t: FloatArray, i: int) -> FloatArray:
        level = 0.05 if i < 5 else 0.12
        v = noisy(level, 0.04, i)(t, i)
        if i in (2, 7):
            v = v * (1.9 if i == 2 else 1.6)
        return v

    w = windows({"inference.forward_time_p99": fwd, "infra.gpu_power_w": noisy(300.0, 0.05)}, 10)
    groups = {f"node-{i}": ("H100" if i < 5 else "A100") for i in range(10)}
    return w, {"peer_groups": groups}


def _bench_like() -> Case:
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from bench.detect_bench import synthetic

    return synthetic(100, 60, 240, 15.0, seed=3), {}


SYNTH: dict[str, Callable[[], Case]] = {
    "busy": _busy,
    "mixed": _mixed,
    "no_baseline": _no_baseline,
    "two_days": _two_days,
    "peer_groups": _peer_groups,
    "bench_like": _bench_like,
}

# -- simulator cases ---------------------------------------------------------------------------

SIM: dict[str, tuple[str, float]] = {  # case → (scenario, seconds after the truth onset)
    "sim_slow_instance": ("slow_instance", 1200.0),
    "sim_incident_0217": ("incident_0217", 1200.0),
    "sim_lb_instance_removed": ("lb_instance_removed", 1200.0),
    "sim_vram_leak": ("vram_leak", 6000.0),
}


def _sim_case(name: str) -> Case:
    from simcases import cut

    from infersight.lab.sim.run import simulate

    scenario, after = SIM[name]
    sim = simulate(scenario, hours=3, history_h=25, instances=6, seed=1)
    onset = sim.truth.onset if sim.truth.onset is not None else sim.frame.end
    return cut(sim.frame, onset + after), {}


def build(name: str) -> Case:
    return SYNTH[name]() if name in SYNTH else _sim_case(name)


# -- comparison ------------------------------------------------------------------------------


def fingerprint(w: Mapping[str, MetricFrame], kwargs: Mapping[str, Any]) -> str:
    h = hashlib.sha256()
    h.update(repr(sorted(kwargs.items())).encode())
    for name in sorted(w):
        f = w[name]
        h.update(f"{name}|{f.start!r}|{f.step!r}|{f.n}".encode())
        for sig in sorted(f.series):
            s = f.series[sig]
            h.update(f"{sig}|{','.join(s.instances)}".encode())
            h.update(np.ascontiguousarray(s.values, dtype=np.float64).tobytes())
    return h.hexdigest()


def diff(a: Any, b: Any, path: str = "$") -> list[str]:
    """Differences between a (expected) and b (actual); floats within REL_TOL."""
    if isinstance(a, bool) or isinstance(b, bool) or a is None or b is None or isinstance(a, str):
        return [] if (type(a) is type(b) and a == b) else [f"{path}: {a!r} != {b!r}"]
    if isinstance(a, int | float) and isinstance(b, int | float):
        if isinstance(a, int) and isinstance(b, int):
            return [] if a == b else [f"{path}: {a!r} != {b!r}"]
        fa, fb = float(a), float(b)
        if math.isnan(fa) and math.isnan(fb):
            return []
        if fa == fb or math.isclose(fa, fb, rel_tol=REL_TOL, abs_tol=0.0):
            return []
        return [f"{path}: {a!r} != {b!r}"]
    if isinstance(a, dict) and isinstance(b, dict):
        if set(a) != set(b):
            return [f"{path}: keys {sorted(set(a) ^ set(b))} differ"]
        return [d for k in a for d in diff(a[k], b[k], f"{path}.{k}")]
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return [f"{path}: length {len(a)} != {len(b)}"]
        return [
            d for i, (x, y) in enumerate(zip(a, b, strict=True)) for d in diff(x, y, f"{path}[{i}]")
        ]
    return [f"{path}: {type(a).__name__} {a!r} != {type(b).__name__} {b!r}"]


def run(name: str) -> tuple[str, dict[str, Any]]:
    w, kwargs = build(name)
    result = detect(w, **kwargs).to_dict()
    return fingerprint(w, kwargs), json.loads(json.dumps(result))


def _load() -> dict[str, Any]:
    out: dict[str, Any] = json.loads(GOLDEN.read_text())
    return out


@pytest.mark.parametrize("name", [*SYNTH, *(pytest.param(n, marks=pytest.mark.sim) for n in SIM)])
def test_golden(name: str) -> None:
    if name in SIM:
        pytest.importorskip("infersight.lab.sim.run")
    golden = _load()
    assert name in golden, f"no golden output for {name}; regenerate"
    fp, got = run(name)
    want = golden[name]
    if fp != want["fingerprint"]:
        msg = f"{name}: input changed (fingerprint); regenerate the golden file deliberately"
        if name in SIM:
            pytest.skip(msg)
        pytest.fail(msg)
    problems = diff(want["result"], got)
    assert not problems, "\n".join(problems[:20])


def regenerate(names: list[str]) -> None:
    out: dict[str, Any] = _load() if GOLDEN.exists() else {}
    for name in names:
        fp, res = run(name)
        out[name] = {"fingerprint": fp, "result": res}
    GOLDEN.parent.mkdir(parents=True, exist_ok=True)
    GOLDEN.write_text(json.dumps(out, indent=None, sort_keys=True) + "\n")


if __name__ == "__main__":
    if "--regen" in sys.argv:
        regenerate([a for a in sys.argv[1:] if not a.startswith("--")] or [*SYNTH, *SIM])
