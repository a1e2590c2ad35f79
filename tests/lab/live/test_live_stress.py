"""One stress comparison on the live lab: clean runs compare as the same, a run with a longer
batching window on the only replica as weaker; the diagnosis of the run is stored with it."""

from __future__ import annotations

import contextlib
import importlib.util
import os
from collections.abc import Iterator

import pytest

from infersight.lab.live import faults, stack
from infersight.lab.live.procs import LabError
from infersight.lab.live.servers import ServerUnavailable
from infersight.stress.compare import compare, noise_band
from infersight.stress.runner import run

pytestmark = pytest.mark.server


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[stack.Lab]:
    try:
        stack.check_binaries()
        # found, not imported: Locust patches the standard library with gevent on import
        if importlib.util.find_spec("locust") is None:
            raise ImportError("the stress tests need Locust: pip install 'infersight[lab]'")
    except (ServerUnavailable, ImportError) as exc:
        if os.environ.get("CI") == "true":
            pytest.fail(str(exc))
        pytest.skip(str(exc))
    lab_dir = tmp_path_factory.mktemp("live-stress")
    started = stack.up(lab_dir, replicas=1)
    try:
        yield started
    finally:
        with contextlib.suppress(LabError):
            stack.down(lab_dir)


def test_clean_runs_are_the_same_and_a_fault_is_weaker(lab: stack.Lab) -> None:
    run(lab.gateway_url, "soak", users=3, duration_s=10)  # warm-up: first connections, cold caches
    clean = [run(lab.gateway_url, "soak", users=3, duration_s=10) for _ in range(3)]
    for r in clean:
        assert r["total"]["requests"] > 0 and r["total"]["error_ratio"] == 0
    # the band is measured on all the clean runs (as `stress compare --band-from` takes them):
    # two runs alone under-measure the spread on a loaded machine; a third then reads "stronger"
    band = noise_band(clean)
    assert compare(clean[0], clean[2], band).verdict == "same"
    faults.inject(lab, "batch-delay", replica=0)
    try:
        slow = run(lab.gateway_url, "soak", users=3, duration_s=10, prometheus=lab.prometheus_url)
    finally:
        faults.clear(stack.Lab.load(lab.dir))
    result = compare(clean[0], slow, band)
    assert result.verdict == "weaker", result.reasons
    assert slow["total"]["p50_s"] > clean[0]["total"]["p50_s"] + 0.1  # the 250 ms window
    assert "diagnose -p" in slow["diagnosis"]["command"]
    assert "roots" in slow["diagnosis"], slow["diagnosis"]
