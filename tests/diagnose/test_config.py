"""DiagnoseConfig: every constant of the engine with its reason, threaded through diagnose()."""

from __future__ import annotations

import pytest
from diagnose_frames import step_frame as _frame
from pydantic import ValidationError

from infersight.diagnose import DiagnoseConfig, diagnose
from infersight.diagnose.config import DEFAULT_CONFIG

NODES = ("node-0", "node-1", "node-2", "node-3")


def test_every_constant_gives_its_reason() -> None:
    for name, field in DiagnoseConfig.model_fields.items():
        assert field.description and len(field.description) > 20, name


def test_frozen_and_strict() -> None:
    assert DiagnoseConfig() == DEFAULT_CONFIG
    with pytest.raises(ValidationError):
        DEFAULT_CONFIG.late_s = 60.0  # type: ignore[misc]
    with pytest.raises(ValidationError):
        DiagnoseConfig(late=60.0)  # type: ignore[call-arg]
    with pytest.raises(ValidationError):
        DiagnoseConfig(tail_share=1.5)


def test_diagnose_reads_the_config_it_is_given() -> None:
    fleet = {n: (0.4, 4.0) for n in NODES}
    spec = {
        "service.e2e_latency_p99": fleet,
        "service.queue_length": {n: (3.0, 80.0) for n in NODES},
        "inference.gpu_util": {n: (0.7, 0.4) for n in NODES},
        "dependency.vector_query_p99": {"vectordb-0": (0.02, 0.8)},
        "infra.major_faults": {"vectordb-0": (2.0, 5000.0), **{n: (1.0, 1.0) for n in NODES}},
    }
    windows = {"incident": _frame(spec)}
    plain = diagnose(windows)
    assert plain.root_causes and len(plain.root_causes[0].chain) > 2
    assert plain.root_causes[0].confidence > 0
    cfg = DiagnoseConfig(
        chain_max_len=2, confidence_base=0.0, confidence_strength=0.0, confidence_breadth=0.0
    )
    tuned = diagnose(windows, config=cfg)
    assert [r.hypothesis for r in tuned.root_causes] == [r.hypothesis for r in plain.root_causes]
    # the config sets the engine's own score; what users see is that score calibrated
    assert all(len(r.chain) <= 2 and r.raw_confidence == 0.0 for r in tuned.root_causes)
