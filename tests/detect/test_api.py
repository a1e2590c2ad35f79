"""detect(): the public surface — inputs checked, results typed and serialisable."""

from __future__ import annotations

import json

import numpy as np
import pydantic
import pytest
from synth import START, FloatArray, N, noisy, windows, with_step

from infersight.detect import DetectConfig, DetectionResult, detect
from infersight.frame import MetricFrame

P99 = "service.e2e_latency_p99"


def _busy() -> dict[str, MetricFrame]:
    def stop(t: FloatArray, i: int) -> FloatArray:
        v = noisy(60.0)(t, i).copy()
        if i == 0:
            v[200:] = np.nan
        return v

    sig = {
        P99: noisy(0.2),
        "inference.gpu_mem_used_ratio": noisy(0.5, 0.01),
        "infra.gpu_temp_c": noisy(60.0),
        "custom.thing": noisy(5.0),
    }
    inc = {
        P99: with_step(noisy(0.2), 120, 2.0),
        "inference.gpu_mem_used_ratio": lambda t, i: 0.5 + 0.2 * (t - t[0]) / 3600,
        "infra.gpu_temp_c": stop,
        "custom.thing": with_step(noisy(5.0), 100, 3.0),
    }
    return windows(sig, instances=5, incident=inc)


def test_result_serialises_to_strict_json() -> None:
    r = detect(_busy())
    assert isinstance(r, DetectionResult)
    d = r.to_dict()
    text = json.dumps(d, allow_nan=False)
    back = json.loads(text)
    assert {a["kind"] for a in back["anomalies"]} == {"deviation", "trend", "absent"}
    assert back["unknown_signals"] == ["custom.thing"]
    assert back["start"] == START and back["scope"]["instances"] == "cluster"
    assert all(
        {
            "signal",
            "layer",
            "instance",
            "onset",
            "onset_uncertainty_s",
            "baseline",
            "observed",
            "ratio",
            "score",
            "direction",
            "baselines",
            "kind",
        }
        <= set(a)
        for a in back["anomalies"]
    )
    scores = [a.score for a in r.anomalies]
    assert scores == sorted(scores, reverse=True)
    assert r.signals_checked == 4 and r.series_checked == 20
    assert {a.layer for a in r.by_signal("custom.thing")} == {"unknown"}
    assert ("infra.gpu_temp_c", "node-0") in r.flagged("absent")


def test_incident_window_required() -> None:
    w = _busy()
    del w["incident"]
    with pytest.raises(ValueError, match="incident"):
        detect(w)


def test_config_is_validated_and_frozen() -> None:
    with pytest.raises(pydantic.ValidationError):
        DetectConfig(z_threshold=-1)
    with pytest.raises(pydantic.ValidationError):
        DetectConfig(nonsense=1)  # type: ignore[call-arg]
    cfg = DetectConfig()
    with pytest.raises(pydantic.ValidationError):
        cfg.z_threshold = 2  # type: ignore[misc]
    assert cfg.abs_floor("service.error_ratio", "ratio") == 0.01
    assert cfg.abs_floor("x.y", None) == 0.0
    assert cfg.rel_floor_for("ratio") == 0.0 and cfg.rel_floor_for("s") == cfg.rel_floor


def test_empty_and_tiny_frames() -> None:
    assert detect({"incident": MetricFrame(0.0, 15.0, 0)}).anomalies == ()
    tiny = windows({P99: noisy(0.2)}, n=3)
    assert detect(tiny).anomalies == ()
    assert detect(_busy(), at=START - 100).anomalies == ()


def test_baseline_with_other_step_is_ignored_and_said() -> None:
    w = windows({P99: noisy(0.2)}, incident={P99: with_step(noisy(0.2), 120, 2.0)})
    b = w["baseline-1d"]
    w["baseline-1d"] = MetricFrame(b.start, 30.0, b.n, b.series)
    r = detect(w)
    assert "baseline-1d" in r.unavailable_baselines
    assert any("differs" in n for n in r.baseline_notes)
    assert all("baseline-1d" not in a.baselines for a in r.anomalies)
    assert N == 240
