"""The registry of condition kinds: every state has one reader, and each reads a `Reading`."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import numpy as np
import pytest
from diagnose_frames import ONSET, N
from diagnose_frames import step_frame as _frame
from pydantic import ValidationError

from infersight.detect import detect
from infersight.diagnose import states
from infersight.diagnose.config import DiagnoseConfig
from infersight.diagnose.context import Context
from infersight.diagnose.kb import Condition, load_kb, walk
from infersight.diagnose.kb_doc import render
from infersight.diagnose.states.reading import NOT_HELD, Reading
from infersight.diagnose.states.registry import kinds, readers, state_on
from infersight.frame import MetricFrame, SignalSeries

NODES = ("node-0", "node-1", "node-2", "node-3")
DOWN_FROM, DOWN_FOR = ONSET + 10, 6  # node-0's target down for 6 minutes, then back


def _fleet(a: float, b: float) -> dict[str, tuple[float, float]]:
    return {n: (a, b) for n in NODES}


def _ctx(config: DiagnoseConfig | None = None) -> Context:
    f = _frame(
        {
            "service.e2e_latency_p99": _fleet(0.4, 4.0),
            "inference.gpu_util": _fleet(0.7, 0.3),
            "infra.gpu_temp_c": _fleet(60.0, 60.0),
        }
    )
    throttle = np.zeros((len(NODES), N))
    throttle[1, ONSET + 3 :] = 1.0
    up = np.ones((len(NODES), N))
    up[0, DOWN_FROM : DOWN_FROM + DOWN_FOR] = 0.0
    series = {
        **f.series,
        "infra.gpu_throttle": SignalSeries(NODES, throttle),
        "infra.target_up": SignalSeries(NODES, up),
    }
    frame = MetricFrame(f.start, f.step, f.n, series)
    w = {"incident": frame}
    return Context.build(frame, detect(w), ("service.e2e_latency_p99",), config)


@pytest.fixture(scope="module")
def ctx() -> Context:
    return _ctx()


def test_every_state_has_one_reader() -> None:
    used = {c.state for r in load_kb().rules for g in (r.confirm, r.refute) if g for c in walk(g)}
    assert used <= set(readers())
    for kind in kinds():
        assert kind.read.__module__ == f"infersight.diagnose.states.{kind.module}"
        assert kind.doc(DiagnoseConfig()).startswith("`")
        for state in kind.states:
            assert readers()[state] is kind.read


KIND = """
from infersight.diagnose.config import DiagnoseConfig
from infersight.diagnose.states.reading import NOT_HELD, Reading

STATES = ("zeroed",)
ACCEPTS = frozenset()
ORDER = 999


def doc(cfg: DiagnoseConfig) -> str:
    return "`zeroed` — every reading since the onset is exactly zero"


def read(ctx, c, inst, shown, since):
    _, post, tail = ctx.before_after(c.signal, inst, since)
    if tail is None or post is None:
        return NOT_HELD
    return Reading(bool((tail == 0).all()), None, ctx.onset, 1.0)
"""


def test_a_new_kind_is_one_module(tmp_path: Path, ctx: Context) -> None:
    """Adding a kind of condition touches its module only: the knowledge base accepts its
    state, the engine reads it, docs/rules.md lists it."""
    (tmp_path / "zeroed.py").write_text(KIND)
    states.__path__.append(str(tmp_path))
    kinds.cache_clear()
    readers.cache_clear()
    try:
        c = Condition(signal="inference.gpu_util", state="zeroed")
        assert not state_on(ctx, c, "node-2").holds
        assert "`zeroed` — every reading" in render()
        with pytest.raises(ValidationError, match="level applies to"):
            Condition(signal="inference.gpu_util", state="zeroed", level=1.0)
    finally:
        states.__path__.remove(str(tmp_path))
        sys.modules.pop("infersight.diagnose.states.zeroed", None)
        kinds.cache_clear()
        readers.cache_clear()
    with pytest.raises(ValidationError, match="unknown state 'zeroed'"):
        Condition(signal="inference.gpu_util", state="zeroed")


def test_a_reading_is_typed_and_frozen(ctx: Context) -> None:
    r = state_on(ctx, Condition(signal="service.e2e_latency_p99", state="up", factor=5), "node-1")
    assert isinstance(r, Reading) and r.holds and r.evidence is not None
    assert r.onset is not None and r.score > 0
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.holds = False  # type: ignore[misc]
    assert Reading(False, None, None, 0.0) == NOT_HELD


def test_deviation_down_and_not_up(ctx: Context) -> None:
    down = Condition(signal="inference.gpu_util", state="down", factor=2)
    assert state_on(ctx, down, "node-2").holds
    assert state_on(ctx, down.model_copy(update={"state": "up"}), "node-2") == NOT_HELD


def test_normal_shows_evidence_only_when_asked(ctx: Context) -> None:
    normal = Condition(signal="infra.gpu_temp_c", state="normal")
    shown = state_on(ctx, normal, "node-0")
    assert shown.holds and shown.evidence is not None and shown.score == 0.0
    assert state_on(ctx, normal, "node-0", shown=False) == Reading(True)
    off = state_on(ctx, Condition(signal="inference.gpu_util", state="normal"), "node-0")
    assert not off.holds and off.evidence is not None  # the deviation that says so


def test_a_level_scores_the_configured_level_score(ctx: Context) -> None:
    above = Condition(signal="service.e2e_latency_p99", state="above", level=1.0)
    r = state_on(ctx, above, "node-3")
    assert r.holds and r.onset == ctx.onset and r.score == ctx.config.level_score
    assert not state_on(ctx, above.model_copy(update={"state": "below"}), "node-3").holds
    other = _ctx(DiagnoseConfig(level_score=2.0))
    assert state_on(other, above, "node-3").score == 2.0


def test_an_event_scores_the_event_score(ctx: Context) -> None:
    event = Condition(signal="infra.gpu_throttle", state="event")
    r = state_on(ctx, event, "node-1")
    assert r.holds and r.score == ctx.config.event_score
    assert r.onset == ctx.frame.start + (ONSET + 3) * ctx.frame.step
    assert state_on(ctx, event, "node-2") == NOT_HELD


def test_an_outage_that_ended_scores_by_its_length(ctx: Context) -> None:
    outage = Condition(signal="infra.target_up", state="outage", level=120.0)
    r = state_on(ctx, outage, "node-0")
    seconds = DOWN_FOR * ctx.frame.step
    assert r.holds and r.onset == ctx.frame.start + DOWN_FROM * ctx.frame.step
    cfg = ctx.config
    assert r.score == min(cfg.state_score_cap, cfg.level_score * seconds / 120.0)
    assert state_on(ctx, outage, "node-1") == NOT_HELD


def test_a_shift_is_capped_and_dated_by_the_onset(ctx: Context) -> None:
    rose = Condition(signal="service.e2e_latency_p99", state="rose", factor=2, where="same")
    r = state_on(ctx, rose, "node-2")
    assert r.holds and r.onset == ctx.onset and r.score == ctx.config.state_score_cap
    fell = rose.model_copy(update={"state": "fell"})
    assert state_on(ctx, fell, "node-2") == NOT_HELD
