"""The vLLM mapping against a real server's /metrics: two scrapes of vLLM 0.32.0 (its CPU build,
the live lab's engine, under load with a shared prompt prefix), saved as they were served."""

from __future__ import annotations

import math
from pathlib import Path

from infersight.exporters import load_catalog
from infersight.sources.exposition import read_exposition
from infersight.sources.local import canonical_frame

SCRAPES = sorted((Path(__file__).parent / "fixtures").glob("vllm-0.32.0-cpu.*.prom"))
T0 = 1_796_630_000.0
INTERVAL = 8.0  # seconds between the two scrapes


def _names() -> set[str]:
    return read_exposition(
        SCRAPES, instance="replica-0", job="vllm", start=T0, interval=INTERVAL
    ).names()


def test_the_fixture_is_two_real_scrapes_with_every_vllm_family() -> None:
    assert len(SCRAPES) == 2
    families = {
        line.split()[2]
        for line in SCRAPES[0].read_text().splitlines()
        if line.startswith("# TYPE vllm:") and not line.split()[2].endswith("_created")
    }
    assert len(families) >= 35  # the bar for a real engine's /metrics


def test_every_signals_preferred_name_is_what_0_32_serves() -> None:
    """The first alternative of each signal is the current name; the others are older
    releases' fallbacks, never needed on 0.32."""
    names = _names()
    fam = load_catalog().families["vllm"]
    stale = {s: sorted(alts[0].metrics - names) for s, alts in fam.mappings.items()}
    assert not {s: m for s, m in stale.items() if m}, stale
    assert "0.32.0" in fam.checked


def test_each_signal_reads_a_number_from_the_scrapes() -> None:
    store = read_exposition(SCRAPES, instance="replica-0", job="vllm", start=T0, interval=INTERVAL)
    fam = load_catalog().families["vllm"]
    got = canonical_frame(
        store, load_catalog(), T0, T0 + INTERVAL, INTERVAL, "30s", list(fam.mappings)
    )
    assert not got.missing, got.missing
    last = {
        s: got.frame.get(s).row("replica-0")[-1]  # type: ignore[union-attr,index]
        for s in fam.mappings
    }
    assert all(math.isfinite(v) for v in last.values()), last
    # under load with a shared prefix: requests finished, tokens generated, prefix blocks hit
    assert last["service.request_rate"] > 0
    assert last["inference.generation_tokens_rate"] > 0
    assert 0.2 < last["inference.prefix_cache_hit_ratio"] < 1.0
    assert last["service.rejection_rate"] == 0  # no admission limit was set
