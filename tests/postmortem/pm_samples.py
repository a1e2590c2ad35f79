"""Small hand-made diagnoses for the postmortem tests: the 02:17 incident's shape (vector DB
swap and a shrunken cache behind a queue), a cache-only one, and one with nothing wrong."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from infersight.diagnose.result import Diagnosis, Evidence, HypothesisResult, RootCause

START = datetime(2026, 3, 14, 1, 45, tzinfo=UTC).timestamp()
END = START + 3600.0
ONSET = datetime(2026, 3, 14, 2, 17, tzinfo=UTC).timestamp()

Reading = tuple[str, str, float, float, str]  # signal, instance, baseline, observed, unit


def hyp(
    hid: str,
    layer: str,
    onset: float,
    readings: Sequence[Reading],
    root: bool = False,
    verdict: str = "confirmed",
    explains: tuple[str, ...] = (),
) -> HypothesisResult:
    ev = tuple(
        Evidence(s, i, "deviation", verdict == "confirmed",
                 f"{s} on {i} moved from {b:g} to {o:g} {u}", START, END, b, o, u, onset)
        for s, i, b, o, u in readings
    )  # fmt: skip
    return HypothesisResult(
        hid, hid.replace("_", " ").capitalize(), layer, verdict, 0.8, "4.1",  # type: ignore[arg-type]
        onset=onset, instances=tuple(sorted({r[1] for r in readings})), evidence=ev,
        explains=explains, is_root=root,
        remedy=f"Remedy for {hid}." if root else "", runbook=f"{hid}-book" if root else None,
    )  # fmt: skip


QUEUE = hyp("queue_backlog", "service", ONSET + 300,
            [("service.queue_length", "node-0", 3.0, 180.0, "count")])  # fmt: skip
LATENCY = hyp("latency_high", "service", ONSET + 240,
              [("service.e2e_latency_p99", "node-0", 0.1, 8.0, "s")])  # fmt: skip
VECTOR = hyp(
    "vector_db_swap", "dependency", ONSET,
    [("dependency.vector_query_p99", "vdb-0", 0.02, 0.8, "s"),
     ("infra.swap_in_rate", "vdb-0", 1.0, 2400.0, "per_s")],
    root=True, explains=("queue_backlog",),
)  # fmt: skip
CACHE = hyp(
    "cache_capacity", "dependency", ONSET - 180,
    [("dependency.cache_hit_ratio", "redis-0", 0.95, 0.6, "ratio"),
     ("dependency.cache_evictions", "redis-0", 2.0, 850.0, "per_s")],
    root=True, explains=("queue_backlog",),
)  # fmt: skip
TEMP: Reading = ("infra.gpu_temp_c", "node-0", 61.0, 53.0, "celsius")
REFUTED = hyp("gpu_thermal_throttling", "infrastructure", ONSET, [TEMP], verdict="refuted")


def diagnosis(
    confirmed: Sequence[HypothesisResult], roots: Sequence[str], summary: str = ""
) -> Diagnosis:
    hyps = (*confirmed, REFUTED)
    rcs = tuple(
        RootCause(r, n, 0.8, (r, "queue_backlog", "latency_high")) for n, r in enumerate(roots, 1)
    )
    return Diagnosis(
        START, END, 15.0, not roots, summary or f"{len(roots)} root causes", {"requests": "all"},
        root_causes=rcs, hypotheses=hyps, missing_signals={"access.5xx_ratio": "not scraped"},
        source={"kind": "test"},
    )  # fmt: skip


def incident_0217() -> Diagnosis:
    return diagnosis([CACHE, VECTOR, LATENCY, QUEUE], ["vector_db_swap", "cache_capacity"])


def cache_only() -> Diagnosis:
    return diagnosis([CACHE, LATENCY, QUEUE], ["cache_capacity"])
