"""A prediction whose signals the data lacks altogether is a gap, not a veto (conditions.py):
a cause holds on what could be checked, names what could not, and ranks below the same cause
checked in full. What a rule `requires` still cannot be done without."""

from __future__ import annotations

from infersight.diagnose import diagnose
from infersight.diagnose.kb import KnowledgeBase, parse_rule
from infersight.lab.evaluate.rag_stack import _DCGM, GATEWAY, NODES, windows

#: dcgm-exporter not deployed: every signal it alone provides
WITHOUT_DCGM = tuple(_DCGM)


def _all(value: float) -> dict[str, float]:
    return {n: value for n in NODES}


SURGE = {
    "access.request_rate": {GATEWAY: 70.0},
    "access.request_latency_p99": {GATEWAY: 3.0},
    "access.upstream_latency_p99": {GATEWAY: 2.9},
    "service.request_rate": _all(17.6),
    "inference.gpu_util": _all(0.9),
    "service.queue_wait_p99": _all(2.4),
    "service.queue_length": _all(30.0),
    "service.e2e_latency_p99": _all(2.8),
    "service.e2e_latency_avg": _all(1.2),
    "inference.running_requests": _all(14.0),
    "inference.batch_size": _all(14.0),
    "generation": {},
}
SURGE.pop("generation")


def test_a_cause_without_gpu_metrics_is_named_with_what_it_could_not_check() -> None:
    # a surge's "the GPUs got busier with it", with dcgm-exporter not deployed: the cause holds
    # on what could be checked, names the GPU's utilisation as unchecked and ranks lower
    kb = KnowledgeBase(
        (
            parse_rule(
                "id: probe\nlayer: access\ntitle: probe\nseed: '2.2'\n"
                "requires: [service.request_rate]\nconfirm:\n  all:\n"
                "    - {signal: service.request_rate, state: up, factor: 1.5, min_share: 0.5}\n"
                "    - {signal: inference.gpu_util, state: up, where: same, min_share: 0.5}\n",
                "probe.yaml",
            ),
        ),
        {"probe": "probe.yaml"},
    )
    seen = diagnose(windows(SURGE, drop=WITHOUT_DCGM), kb=kb).hypothesis("probe")
    checked = diagnose(windows(SURGE), kb=kb).hypothesis("probe")
    assert seen is not None and checked is not None
    assert seen.verdict == checked.verdict == "confirmed"
    assert "inference.gpu_util" in seen.unchecked_predictions
    assert checked.unchecked_predictions == ()
    assert seen.confidence < checked.confidence


def test_a_prediction_checked_through_other_readings_and_failed_is_no_gap() -> None:
    # a surge: more sequences run, batches grow; without the GPU's utilisation, a worker
    # shortage's "the engine gets no busier" is still read on running requests and batch size
    # and fails there, so the shortage is not confirmed on the gap
    blind = diagnose(windows(SURGE, drop=WITHOUT_DCGM))
    pool = blind.hypothesis("threadpool_too_small")
    assert pool is not None and pool.verdict != "confirmed"


def test_a_cause_whose_required_signals_are_missing_stays_undecided() -> None:
    # a hot card with its clock pulled down, but dcgm-exporter not deployed: throttling
    # cannot be confirmed on its symptoms alone, it is named as not checkable
    change = {
        "infra.gpu_sm_clock_mhz": {"node-2": 1614.0},
        "infra.gpu_temp_c": {"node-2": 82.0},
        "service.e2e_latency_p99": {"node-2": 0.7},
        "service.e2e_latency_avg": {"node-2": 0.3},
        "access.request_latency_p99": {GATEWAY: 0.6},
    }
    dx = diagnose(windows(change, drop=WITHOUT_DCGM))
    h = dx.hypothesis("gpu_thermal_throttling")
    assert h is not None and h.verdict == "inconclusive"
    assert "infra.gpu_temp_c" in h.missing_signals


def _one_rule(confirm: str) -> KnowledgeBase:
    text = (
        "id: probe\nlayer: service\ntitle: probe\nseed: '2.2'\n"
        "requires: [service.error_ratio]\nconfirm:\n" + confirm
    )
    return KnowledgeBase((parse_rule(text, "probe.yaml"),), {"probe": "probe.yaml"})


ERRORS = {"service.error_ratio": _all(0.4)}


def test_a_top_prediction_whose_signals_are_all_absent_is_a_gap() -> None:
    kb = _one_rule(
        "  all:\n"
        "    - {signal: service.error_ratio, state: up}\n"
        "    - {signal: inference.generation_tokens_rate, state: down, where: same}\n"
    )
    h = diagnose(windows(ERRORS, engine="triton"), kb=kb).hypothesis("probe")
    assert h is not None and h.verdict == "confirmed"
    assert h.unchecked_predictions == ("inference.generation_tokens_rate",)


def test_one_prediction_read_jointly_is_never_half_checked() -> None:
    # "errors up and tokens halved" inside an alternative is one reading of one prediction:
    # without a token counter (Triton) it is unknown, not held on the errors alone
    kb = _one_rule(
        "  all:\n"
        "    - {signal: service.error_ratio, state: up}\n"
        "    - any:\n"
        "        - {signal: service.restarts, state: event, where: same}\n"
        "        - all:\n"
        "            - {signal: service.error_ratio, state: up, where: same}\n"
        "            - {signal: inference.generation_tokens_rate, state: down, where: same}\n"
    )
    base = {"service.restarts": _all(0.0)}
    h = diagnose(windows(ERRORS, engine="triton", base=base), kb=kb).hypothesis("probe")
    assert h is not None and h.verdict == "inconclusive"
    assert "inference.generation_tokens_rate" in h.missing_signals


def test_a_refute_that_could_not_be_checked_is_named_on_the_confirmed_cause() -> None:
    """Batches at the cap in a surge that pins the GPUs: without a restart signal the surge's
    refute of the batch cap cannot be decided (restarts lift it), so the cap is confirmed and
    says which signal would have settled it; with restarts exported and none seen, it is
    refuted, nothing left undecided. (Built here: the simulator's draws changed under it.)"""
    change = {
        **SURGE,
        "service.request_rate": _all(20.0),
        "inference.gpu_util": _all(0.93),
        "inference.batch_size": _all(30.0),
        "inference.running_requests": _all(30.0),
        "inference.forward_time_avg": _all(0.5),
        "inference.gpu_mem_used_ratio": _all(0.97),
    }
    restarts = "service.restarts"
    h = diagnose(windows(change)).hypothesis("max_batch_too_large")
    assert h is not None and h.verdict == "confirmed"
    assert h.refute_undecided and restarts in h.refute_missing
    base = {restarts: _all(0.0)}
    full = diagnose(windows(change, base=base)).hypothesis("max_batch_too_large")
    assert full is not None and not full.refute_undecided and full.refute_missing == ()
