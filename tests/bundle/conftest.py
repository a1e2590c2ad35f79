"""Fixtures of the bundle tests."""

from __future__ import annotations

import pytest
from bundle_helpers import make_frame

from infersight.frame import MetricFrame


@pytest.fixture
def frame() -> MetricFrame:
    return make_frame()
