"""`infersight serve` links past incidents from the library its config names."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from pm_samples import cache_only, incident_0217

from infersight.postmortem import new
from infersight.postmortem.inputs import Incident
from infersight.serve.config import ServeConfig
from infersight.serve.jobs import history


def test_the_configured_library_is_searched(tmp_path: Path) -> None:
    new(Incident(incident_0217()), tmp_path)
    new(Incident(cache_only()), tmp_path)
    (tmp_path / "2020-01-01-broken.md").write_text("no front matter\n")
    cfg = ServeConfig.model_validate({"history": str(tmp_path), "auth": {"disabled": True}})
    seen = history(cfg, incident_0217())
    assert seen is not None and seen[0].id == "2026-03-14-vector-db-swap"
    assert [p.id for p in seen] == ["2026-03-14-vector-db-swap", "2026-03-14-cache-capacity"]


def test_without_a_library_or_with_a_missing_one_the_reports_go_without(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    assert (
        history(ServeConfig.model_validate({"auth": {"disabled": True}}), incident_0217()) is None
    )
    gone = ServeConfig.model_validate(
        {"history": str(tmp_path / "gone"), "auth": {"disabled": True}}
    )
    with caplog.at_level(logging.WARNING, logger="infersight.serve"):
        assert history(gone, incident_0217()) is None
    assert "no such library folder" in caplog.text
