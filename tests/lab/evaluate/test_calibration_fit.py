"""The calibration fit: pool-adjacent-violators on hand-made answers, the expected calibration
error on a known example, folds by group, and an out-of-sample figure that never sees its own
group."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from infersight.lab.evaluate.calibration_fit import (
    CalibrationConfig,
    apply,
    ece,
    fit,
    folds_of,
    out_of_sample,
    pav,
    scores,
    wrong_at,
)
from infersight.lab.evaluate.leave_one_out import Pair


def test_pav_pools_the_violators_into_known_blocks() -> None:
    blocks = pav([0.1, 0.2, 0.3, 0.4, 0.5, 0.6], [0, 1, 0, 1, 1, 1])
    assert [(b.lo, b.hi, b.weight) for b in blocks] == [
        (0.1, 0.1, 1),
        (0.2, 0.3, 2),
        (0.4, 0.6, 3),
    ]
    assert [b.level for b in blocks] == [0.0, 0.5, 1.0]
    assert [b.centre for b in blocks] == pytest.approx([0.1, 0.25, 0.5])


def test_pav_keeps_ties_in_one_block_and_reads_unsorted_input() -> None:
    blocks = pav([0.5, 0.2, 0.5, 0.2], [1, 0, 0, 1])
    assert len(blocks) == 1 and blocks[0].level == 0.5 and blocks[0].weight == 4


def test_pav_is_monotone_and_keeps_the_share_right() -> None:
    rng = np.random.default_rng(3)
    x = rng.uniform(0, 1, 500)
    y = (rng.uniform(0, 1, 500) < x).astype(float)
    blocks = pav(x, y, min_weight=20)
    levels = [b.level for b in blocks]
    assert all(b > a for a, b in itertools.pairwise(levels))
    assert all(b.weight >= 20 for b in blocks)
    total = sum(b.level * b.weight for b in blocks)
    assert total == pytest.approx(y.sum())  # pooling moves answers, never loses them


def test_a_light_block_joins_its_closer_neighbour() -> None:
    blocks = pav([0.1, 0.2, 0.3, 0.4, 0.5, 0.6], [0, 1, 0, 1, 1, 1], min_weight=3)
    assert [(b.lo, b.hi) for b in blocks] == [(0.1, 0.3), (0.4, 0.6)]
    assert [b.level for b in blocks] == pytest.approx([1 / 3, 1.0])


def test_a_handful_of_lucky_answers_cannot_make_a_step_to_one() -> None:
    x = [0.5] * 100 + [0.95] * 3
    right = [i % 2 == 0 for i in range(100)] + [True] * 3
    pairs = [Pair(c, r, "suite", "named", "seed 0") for c, r in zip(x, right, strict=True)]
    curves = fit(pairs, CalibrationConfig())
    assert max(curves["named"].y) < 0.6
    assert apply(curves, [Pair(0.99, True, "suite")])[0] < 0.6


def test_levels_are_clipped_and_a_kind_with_too_few_answers_is_fitted_on_all() -> None:
    cfg = CalibrationConfig(min_block_weight=5)
    pairs = [Pair(0.3, False, "suite", "named", "seed 0")] * 10
    pairs += [Pair(0.9, True, "suite", "named", "seed 0")] * 10
    pairs += [Pair(0.9, True, "loo", "unnamed", "seed 0")] * 2
    curves = fit(pairs, cfg)
    assert curves["named"].y == (0.02, 0.98) and curves["named"].fitted_on == "named"
    assert curves["unnamed"].fitted_on == "all" and curves["unnamed"].pairs == 2


def test_ece_on_a_known_example() -> None:
    # bin 0.1–0.2: stated 0.15, half right (0.35 off); bin 0.8–0.9: stated 0.85, all right
    assert ece([0.15, 0.15, 0.85, 0.85], [True, False, True, True]) == pytest.approx(0.25)
    assert ece([0.5, 0.5], [True, False]) == 0.0
    assert ece([1.0], [True]) == 0.0  # 1.0 falls in the last bin
    assert np.isnan(ece([], []))


def test_wrong_at_high_confidence_is_a_share_of_all_answers() -> None:
    assert wrong_at([0.9, 0.85, 0.5, 0.95], [False, True, False, True], 0.8) == 0.25
    assert wrong_at([0.79, 0.5], [False, False], 0.8) == 0.0


def test_folds_hold_whole_groups_and_balance_their_sizes() -> None:
    groups = ["seed 0"] * 50 + ["seed 1"] * 45 + ["lab a"] * 2 + ["lab b"] * 2 + ["case x"] * 3
    fold = folds_of(groups, 3)
    assert set(fold) == set(groups) and set(fold.values()) == {0, 1, 2}
    assert fold["seed 0"] != fold["seed 1"]
    assert folds_of(groups, 3) == fold  # a rerun splits the same way
    assert set(folds_of(["a", "a", "b"], 5).values()) == {0, 1}  # no more folds than groups


def test_the_out_of_sample_figure_never_sees_its_own_group() -> None:
    # one seed always right at 0.9, another always wrong there: each is predicted by the other
    pairs = [Pair(0.9, True, "suite", "named", "seed 0")] * 30
    pairs += [Pair(0.9, False, "suite", "named", "seed 1")] * 30
    cfg = CalibrationConfig(folds=2)
    oos = out_of_sample(pairs, cfg)
    assert list(oos[:30]) == [0.02] * 30 and list(oos[30:]) == [0.98] * 30
    s = scores(pairs, cfg)
    assert s.ece == pytest.approx(0.98) and s.wrong_high == 0.5
    assert s.ece_raw == pytest.approx(0.4) and not s.meets(cfg)


def test_one_group_alone_has_no_out_of_sample_figure() -> None:
    with pytest.raises(ValueError, match="two groups or more"):
        out_of_sample([Pair(0.5, True, "suite", "named", "seed 0")] * 5, CalibrationConfig())
