"""±Inf samples evaluate by IEEE rules without printing numpy warnings."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from infersight.promql.evaluate import evaluate
from infersight.promql.parser import parse
from infersight.sources.raw import RawStore

T0 = 1_700_000_000.0


@pytest.mark.parametrize(
    "query",
    ["sum_over_time(g[1m])", "avg_over_time(g[1m])", "sum_over_time(c_total[2m]) / 2"],
)
def test_infinite_samples_raise_no_warning(query: str) -> None:
    ts = T0 + 15.0 * np.arange(40)
    vals = np.where(np.arange(40) % 3 == 0, np.inf, np.where(np.arange(40) % 3 == 1, -np.inf, 1))
    store = RawStore()
    store.add_many("c_total", (("instance", "a"),), ts, vals)
    store.add_many("g", (("instance", "a"),), ts, vals)
    store.add_many("g", (("instance", "b"),), ts, -vals)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        evaluate(parse(query), store, T0, 15.0, 40)
