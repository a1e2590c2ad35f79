"""The live lab bench's checks that a fault shows in Prometheus: one per fault, each valid
PromQL, and the VRAM leak's seen after the card has filled."""

from __future__ import annotations

import numpy as np
from bench._live_signatures import SIGNATURES
from bench.live_lab import _seen

from infersight.lab.live.faults import FAULTS
from infersight.promql import parse
from infersight.promql.evaluate import evaluate
from infersight.sources.raw import RawStore, labels_of


def test_every_fault_has_a_check_in_valid_promql() -> None:
    assert set(SIGNATURES) == set(FAULTS)
    for query, test in SIGNATURES.values():
        parse(query.replace("{r}", "0"))
        assert test.split()[0] in ("<=", ">=", "==", ">", "<")


def test_a_leak_that_filled_the_card_before_the_check_is_seen() -> None:
    # 60 MiB/s from 72800 MiB on a 81000 MiB card, scraped every 5 s: full after about 137 s
    # of a 180 s hold, flat for the rest (the last minute climbs far less than 1000 MiB)
    ts = np.arange(0.0, 181.0, 5.0)
    used = np.minimum(72800.0 + 60.0 * ts, 81000.0)
    store = RawStore()
    store.add_many("DCGM_FI_DEV_FB_USED", labels_of({"node": "replica-0"}), ts, used)
    query, test = SIGNATURES["gpu-vram-leak"]
    ((_, value),) = evaluate(parse(query.replace("{r}", "0")), store, 180.0, 5.0, 1)
    assert _seen(float(value[0]), test)
    ((_, last_minute),) = evaluate(
        parse('delta(DCGM_FI_DEV_FB_USED{node="replica-0"}[1m])'), store, 180.0, 5.0, 1
    )
    assert float(last_minute[0]) < 1000  # what the check read before
