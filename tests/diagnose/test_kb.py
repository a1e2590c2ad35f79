"""Knowledge base: every rule loads, bad rules are refused with file + field, users add rules."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from infersight.diagnose import KBError, load_kb
from infersight.diagnose.kb import parse_rule
from infersight.diagnose.kb_doc import render

SIM_ROOTS = {
    "vector_db_swap", "cache_capacity", "batch_window_starvation", "max_batch_too_large",
    "vram_oom_cascade", "vram_leak", "shared_gpu_contention", "threadpool_too_large",
    "threadpool_too_small", "unbounded_queue", "cache_stampede", "gpu_thermal_throttling",
    "gpu_hardware_fault", "slow_instance", "network_retransmits", "model_cold_start",
    "log_disk_io", "lb_instance_removed", "gc_pauses", "traffic_surge",
}  # fmt: skip
BEYOND = {"instance_down", "gateway_fault", "upstream_connect_slow", "kv_cache_preemption",
          "long_prefill_blocking", "engine_hang"}  # fmt: skip

GOOD = """
id: my_rule
layer: dependency
title: Mine
seed: "4.1"
confirm:
  all:
    - {signal: dependency.cache_hit_ratio, state: down}
explains: [latency_high]
"""


def test_every_builtin_rule_loads_and_covers_the_seed() -> None:
    kb = load_kb()
    assert kb.ids >= SIM_ROOTS | BEYOND
    layers = {r.layer for r in kb.rules if r.kind == "cause"}
    assert layers == {"access", "service", "inference", "dependency", "infrastructure"}
    for r in kb.rules:
        assert r.title and r.seed and r.condition_signals()
        if r.kind == "cause":
            assert r.remedy and r.runbook, r.id


@pytest.mark.parametrize(
    ("text", "field"),
    [
        (GOOD.replace("state: down", "state: sideways"), "confirm.all.0"),
        (GOOD.replace("dependency.cache_hit_ratio", "no.such_signal"), "no.such_signal"),
        (GOOD.replace("layer: dependency", "layer: kitchen"), "layer"),
        (GOOD.replace("title: Mine\n", ""), "title"),
        ("- just a list", "one mapping"),
    ],
)
def test_malformed_rule_names_file_and_field(text: str, field: str) -> None:
    with pytest.raises(KBError) as err:
        parse_rule(text, "rules/bad.yaml")
    assert "rules/bad.yaml" in str(err.value) and field in str(err.value)


def test_user_folder_adds_a_rule(tmp_path: Path) -> None:
    (tmp_path / "mine.yaml").write_text(GOOD, "utf-8")
    kb = load_kb([tmp_path])
    assert "my_rule" in kb.ids and kb.origins["my_rule"].endswith("mine.yaml")
    assert "my_rule" not in load_kb().ids


def test_unknown_explains_target_is_refused(tmp_path: Path) -> None:
    (tmp_path / "bad.yaml").write_text(GOOD.replace("[latency_high]", "[nothing_here]"), "utf-8")
    with pytest.raises(KBError, match=r"bad\.yaml: explains: .*nothing_here"):
        load_kb([tmp_path])


def test_rules_doc_is_current() -> None:
    doc = Path(__file__).resolve().parents[2] / "docs" / "rules.md"
    assert doc.read_text("utf-8") == render(), (
        "docs/rules.md is stale: python -m infersight.diagnose.kb_doc > docs/rules.md"
    )


def test_requires_names_what_makes_a_rule_undecidable() -> None:
    """An inconclusive verdict is "not observable" only for a required signal: a missing
    alternative (forward_time_p99 when forward_time_avg is there) is not."""
    rule = load_kb().get("shared_gpu_contention")
    assert rule is not None and rule.requires
    assert rule.unobservable(["inference.gpu_processes", "inference.forward_time_p99"]) == []
    gone = ["inference.gpu_processes", "inference.forward_time_avg", "inference.forward_time_p99"]
    assert set(rule.unobservable(gone)) == set(gone)
    plain = load_kb().get("latency_high")
    assert plain is not None and not plain.requires
    assert plain.unobservable(["service.ttft_p99"]) == ["service.ttft_p99"]


def test_every_cause_names_what_it_cannot_be_decided_without() -> None:
    """A cause's `requires` is what separates an unchecked prediction (a gap) from an
    undecidable rule: every cause states it, and each entry is a signal its conditions read."""
    for rule in load_kb().rules:
        if rule.kind != "cause":
            continue
        assert rule.requires, f"{rule.id} declares no requires"
        read = set(rule.condition_signals())
        for entry in rule.requires:
            alts = [a.strip() for a in entry.split("|")]
            assert any(a in read for a in alts), f"{rule.id}: {entry} is read by no condition"


@pytest.mark.parametrize("kind", ["fifo", "folder", "latin1"])
def test_a_rule_file_that_is_no_text_file_is_refused_in_one_line(tmp_path: Path, kind: str) -> None:
    bad = tmp_path / "bad.yaml"
    if kind == "fifo":
        os.mkfifo(bad)  # reading it would block forever
    elif kind == "folder":
        bad.mkdir()
    else:
        bad.write_bytes(GOOD.replace("title: Mine", "title: Règle").encode("latin-1"))
    with pytest.raises(KBError, match=r"bad\.yaml: (is a FIFO|is a folder|not UTF-8)"):
        load_kb([tmp_path])
