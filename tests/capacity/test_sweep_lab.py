"""A concurrency sweep of the live lab's API (real processes: HAProxy, the API, Redis, the
vector service, a GPU stand-in): a knee, twice within one step."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from infersight.capacity import DEFAULT_CONFIG, advise
from infersight.capacity.sweep import sweep
from infersight.capacity.targets import Target
from infersight.lab.live import stack
from infersight.lab.live.servers import ServerUnavailable

pytestmark = [pytest.mark.slow, pytest.mark.server]
LEVELS = [1, 2, 4, 8, 16, 32]


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[stack.Lab]:
    try:
        stack.check_binaries()
    except ServerUnavailable as exc:
        if os.environ.get("CI") == "true":
            pytest.fail(str(exc))
        pytest.skip(str(exc))
    lab_dir: Path = tmp_path_factory.mktemp("lab")
    started = stack.up(lab_dir, replicas=1)
    try:
        yield started
    finally:
        stack.down(lab_dir)


def test_the_live_labs_api_has_a_knee_that_two_sweeps_agree_on(lab: stack.Lab) -> None:
    cfg = DEFAULT_CONFIG.model_copy(update={"step_seconds": 3.0, "warmup_seconds": 0.5})
    # {i}: a distinct question each time, so the API's Redis cache does not answer them all
    target = Target(lab.gateway_url + "/v1/answer?q=capacity+probe+{i}", "get")
    knees = []
    for _ in range(2):
        curve, _logs = sweep(target, "concurrency", LEVELS, 1, cfg)
        advice = advise(curve, cfg)
        assert advice.knee.x is not None and advice.setting is not None, (curve.ys, advice.knee)
        knees.append(LEVELS.index(int(advice.knee.x)))
        # below the knee throughput grew with concurrency; the setting is under the knee
        assert curve.ys[1] > 1.5 * curve.ys[0]
        assert 1 <= advice.setting < advice.knee.x
    assert abs(knees[0] - knees[1]) <= 1, knees
