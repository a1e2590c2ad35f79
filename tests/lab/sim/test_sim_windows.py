"""A simulated bundle's windows are emitted and mapped one by one (issue 30: `lab sim -n 1000`
must fit in memory); they must be the very frames cut from the whole run's mapping."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from infersight.lab.sim.outputs import incident_end, sim_frame, sim_windows, write_sim_bundle
from infersight.lab.sim.run import simulate
from infersight.windows import cut_windows

pytestmark = pytest.mark.sim


@pytest.mark.parametrize("dialect", ["vllm", "triton"])
def test_windows_made_one_by_one_equal_the_windows_cut_from_the_whole_run(dialect: str) -> None:
    res = simulate("incident_0217", hours=2, instances=3, seed=5, history_h=25)
    end = incident_end(res)
    whole = cut_windows(sim_frame(res, dialect), end, 3600.0)
    parts = sim_windows(res, dialect, end, 3600.0)
    assert list(parts) == list(whole) == ["incident", "baseline-1h", "baseline-1d"]
    for name, w in whole.items():
        p = parts[name]
        assert (p.start, p.step, p.n) == (w.start, w.step, w.n), name
        assert set(p.signals) == set(w.signals), name
        for sig in w.signals:
            a, b = w.get(sig), p.get(sig)
            assert a is not None and b is not None
            assert a.instances == b.instances, (name, sig)
            np.testing.assert_allclose(b.values, a.values, rtol=1e-9, atol=1e-12,
                                       equal_nan=True, err_msg=f"{name} {sig}")  # fmt: skip


def test_a_window_keeps_the_runs_clock() -> None:
    res = simulate("healthy_flat", hours=1, instances=2, seed=1)
    part = res.window(res.times[100], res.times[150])
    assert part.t0 == res.t0 == res.times[0]
    assert part.times[0] == res.times[100] and part.times.size == 51
    assert part.trace.inst["up"].shape == (51, 2)
    assert part.frame.n == 51


def test_a_bundle_in_a_dialect_never_builds_the_whole_runs_frame(tmp_path: Path) -> None:
    """The canonical frame is the run's largest part; writing a vLLM bundle must not need it."""
    res = simulate("incident_0217", hours=1, instances=2, seed=2, history_h=25)
    write_sim_bundle(res, tmp_path / "b.tar.gz", "vllm")
    assert res._frame is None
    assert res.frame.n == res.times.size  # built on demand, once
    assert res._frame is res.frame
