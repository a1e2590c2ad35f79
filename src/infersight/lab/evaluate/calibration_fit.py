"""The calibration fit: raw confidence → probability right, its error measured out of sample.

Per kind of root (`named`, `indirect`, `unnamed`) an isotonic regression of "the first root
was right" on the raw figure, by pool-adjacent-violators (numpy, no learning library): the
monotone step function closest to the answers in squared error. Blocks lighter than
`min_block_weight` answers are pooled with their closer neighbour, so a handful of lucky points
cannot make a step to 1.0, and every level is clipped to [`floor`, `ceiling`]. The product
reads the blocks' centres and levels (`diagnose/calibration.json`) and interpolates between
them.

The expected calibration error (ECE) is over `bins` equal-width bins of the stated figure,
each weighted by its count. It is reported out of sample: the pairs are split into `folds`
by group (a simulator seed, a lab bundle, a case file), every fold is mapped by a fit on the
others, and the pooled predictions are scored; a seed's cases never sit in fit and test both.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from infersight.diagnose.calibrate import KINDS, Curve, FittedOn, Kind
from infersight.frame import FloatArray
from infersight.lab.evaluate.leave_one_out import Pair


class CalibrationConfig(BaseModel):
    """Every constant of the fit and of its figures, with its reason."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    #: the issue's ECE: ten equal-width bins of the stated confidence
    bins: int = Field(10, ge=2)
    #: each group tested once by a fit on the rest; five folds keep four fifths to fit on
    folds: int = Field(5, ge=2)
    #: answers a block needs: at 20, a block all right still has a 95% lower bound near 0.83,
    #: and three lucky answers at the top cannot lift the curve to 1.0 on their own
    min_block_weight: float = Field(20.0, gt=0)
    #: a fit has seen finitely many answers: never certain either way
    floor: float = Field(0.02, ge=0, le=1)
    ceiling: float = Field(0.98, ge=0, le=1)
    #: perturbations whose fault is at least half the suite's (the issue's bar: at 0.3× a
    #: fault may be too small to tell from noise, and its misses say little about confidence)
    min_magnitude: float = 0.5
    #: the confidence at which the issue counts wrong answers, and its bars
    high: float = 0.8
    bar_ece: float = 0.08
    bar_wrong_high: float = 0.05


@dataclass(frozen=True)
class Block:
    """One step of the fit: its raw span, centre (mean raw) and share right."""

    lo: float
    hi: float
    centre: float
    level: float
    weight: float


def pav(x: Sequence[float], y: Sequence[float], min_weight: float = 0.0) -> list[Block]:
    """Non-decreasing blocks of `y` on `x` (pool-adjacent-violators); ties in x share a block,
    equal levels merge, and a block lighter than `min_weight` joins its closer neighbour."""
    xs, ys = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if xs.size == 0:
        return []
    order = np.argsort(xs, kind="stable")
    xs, ys = xs[order], ys[order]
    # blocks as [sum y, weight, sum x, lo, hi]; one per distinct x to start
    blocks: list[list[float]] = []
    for xv, yv in zip(xs, ys, strict=True):
        if blocks and blocks[-1][4] == xv:
            b = blocks[-1]
            b[0], b[1], b[2] = b[0] + yv, b[1] + 1, b[2] + xv
        else:
            blocks.append([float(yv), 1.0, float(xv), float(xv), float(xv)])
    blocks = _pool(blocks)
    while len(blocks) > 1:
        light = min(range(len(blocks)), key=lambda i: (blocks[i][1], i))
        if blocks[light][1] >= min_weight:
            break
        i = light
        if i == 0:
            j = 1
        elif i == len(blocks) - 1:
            j = i - 1
        else:
            mean = blocks[i][0] / blocks[i][1]
            left, right = blocks[i - 1], blocks[i + 1]
            dl, dr = abs(mean - left[0] / left[1]), abs(right[0] / right[1] - mean)
            j = i - 1 if (dl, left[1]) <= (dr, right[1]) else i + 1
        first, last = sorted((i, j))
        blocks[first : last + 1] = [_merge(blocks[first], blocks[last])]
        blocks = _pool(blocks)
    return [Block(b[3], b[4], b[2] / b[1], b[0] / b[1], b[1]) for b in blocks]


def _merge(a: list[float], b: list[float]) -> list[float]:
    return [a[0] + b[0], a[1] + b[1], a[2] + b[2], min(a[3], b[3]), max(a[4], b[4])]


def _pool(blocks: list[list[float]]) -> list[list[float]]:
    """Merge adjacent blocks until their levels strictly increase."""
    out: list[list[float]] = []
    for b in blocks:
        out.append(b)
        while len(out) > 1 and out[-2][0] / out[-2][1] >= out[-1][0] / out[-1][1]:
            last = out.pop()
            out[-1] = _merge(out[-1], last)
    return out


def curve(pairs: Sequence[Pair], fitted_on: FittedOn, cfg: CalibrationConfig) -> Curve:
    """The product's form of a fit: block centres and clipped levels."""
    blocks = pav(
        [p.confidence for p in pairs], [float(p.right) for p in pairs], cfg.min_block_weight
    )
    if not blocks:
        raise ValueError("no answers to fit")
    xs = [round(b.centre, 6) for b in blocks]
    ys = [round(min(max(b.level, cfg.floor), cfg.ceiling), 6) for b in blocks]
    # centres rounded to 6 digits could meet: keep x strictly increasing
    keep = [0] + [i for i in range(1, len(xs)) if xs[i] > xs[i - 1]]
    return Curve(
        x=tuple(xs[i] for i in keep),
        y=tuple(ys[i] for i in keep),
        pairs=len(pairs),
        fitted_on=fitted_on,
    )


def fit(pairs: Sequence[Pair], cfg: CalibrationConfig) -> dict[Kind, Curve]:
    """One curve per kind; a kind with fewer answers than one block needs is fitted on all."""
    if not pairs:
        raise ValueError("no answers to fit a calibration on")
    out: dict[Kind, Curve] = {}
    for kind in KINDS:
        own = [p for p in pairs if p.kind == kind]
        if len(own) >= cfg.min_block_weight:
            out[kind] = curve(own, kind, cfg)
        else:
            c = curve(pairs, "all", cfg)
            out[kind] = c.model_copy(update={"pairs": len(own)})
    return out


def apply(curves: dict[Kind, Curve], pairs: Sequence[Pair]) -> FloatArray:
    """Each pair's calibrated figure under `curves`."""
    return np.array(
        [float(np.interp(p.confidence, curves[p.kind].x, curves[p.kind].y)) for p in pairs],
        dtype=np.float64,
    )


def ece(conf: Sequence[float] | FloatArray, right: Sequence[bool], bins: int = 10) -> float:
    """Expected calibration error: per equal-width bin of the stated figure, |mean stated −
    share right|, weighted by the bin's count (nan: no answers)."""
    c = np.asarray(conf, dtype=np.float64)
    r = np.asarray(right, dtype=np.float64)
    if c.size == 0:
        return float("nan")
    idx = np.minimum((np.clip(c, 0.0, 1.0) * bins).astype(int), bins - 1)
    total = 0.0
    for b in range(bins):
        m = idx == b
        if m.any():
            total += m.sum() * abs(float(c[m].mean()) - float(r[m].mean()))
    return total / c.size


def wrong_at(conf: Sequence[float] | FloatArray, right: Sequence[bool], high: float) -> float:
    """The share of all answers that were wrong at a stated figure of `high` or more."""
    c = np.asarray(conf, dtype=np.float64)
    if c.size == 0:
        return float("nan")
    wrong = ~np.asarray(right, dtype=bool)
    return float(((c >= high) & wrong).sum() / c.size)


def folds_of(groups: Sequence[str], k: int) -> dict[str, int]:
    """Groups → fold, balancing the folds' sizes (largest groups first, each to the lightest
    fold; ties by a stable hash of the name, so a rerun splits the same way)."""
    sizes: dict[str, int] = {}
    for g in groups:
        sizes[g] = sizes.get(g, 0) + 1
    k = min(k, len(sizes))
    load = [0] * max(k, 1)
    out = {}
    for g in sorted(sizes, key=lambda g: (-sizes[g], zlib.crc32(g.encode()), g)):
        f = min(range(len(load)), key=lambda i: (load[i], i))
        out[g] = f
        load[f] += sizes[g]
    return out


def out_of_sample(pairs: Sequence[Pair], cfg: CalibrationConfig) -> FloatArray:
    """Each pair's calibrated figure from a fit that never saw its group."""
    fold = folds_of([p.group for p in pairs], cfg.folds)
    if len(set(fold.values())) < 2:
        raise ValueError(
            "an out-of-sample error needs answers from two groups or more (seeds, lab "
            "bundles, case files); add sources or seeds"
        )
    out = np.full(len(pairs), np.nan)
    for f in sorted(set(fold.values())):
        test = [i for i, p in enumerate(pairs) if fold[p.group] == f]
        train = [p for p in pairs if fold[p.group] != f]
        curves = fit(train, cfg)
        out[test] = apply(curves, [pairs[i] for i in test])
    return out


@dataclass(frozen=True)
class Scores:
    """The figures a fit is judged by."""

    pairs: int
    ece_raw: float
    ece: float  # out of sample
    wrong_high_raw: float
    wrong_high: float  # out of sample
    calibrated: FloatArray  # out of sample, per pair

    def meets(self, cfg: CalibrationConfig) -> bool:
        return self.ece <= cfg.bar_ece and self.wrong_high <= cfg.bar_wrong_high


def scores(pairs: Sequence[Pair], cfg: CalibrationConfig) -> Scores:
    raw = [p.confidence for p in pairs]
    right = [p.right for p in pairs]
    oos = out_of_sample(pairs, cfg)
    return Scores(
        len(pairs),
        ece(raw, right, cfg.bins),
        ece(oos, right, cfg.bins),
        wrong_at(raw, right, cfg.high),
        wrong_at(oos, right, cfg.high),
        oos,
    )
