"""Daily edges: where yesterday and last week step at this clock time, the band steps with them.

The band's centre is a block median that pools ±`local_half_width` points, so at an edge, and at
the newest points where the pool only has the side before, it lags: a repeated daily edge was
flagged every day (seed §6.1). Where every same-clock-time reference steps away from the block
centre, in the same direction, by more than `edge_z` scales, the centre follows them point by
point: each reference's median of 3 neighbours, then their median. The hour before does not
repeat the clock time and takes no part; one odd day among two (yesterday's own incident) does
not move the centre, as they must agree.

The centre and scale are constant over a block, so the lines are drawn per block and compared
with the points in place; the later references are read only where the first one stepped.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt

from infersight.detect._stats import BoolArray, FloatArray

IntpArray = npt.NDArray[np.intp]
Compare = Callable[[FloatArray, FloatArray], BoolArray]


def follow_edges(
    center: FloatArray,
    center_b: FloatArray,
    scale_b: FloatArray,
    block: int,
    seasonal: Sequence[FloatArray],
    edge_z: float,
) -> FloatArray:
    """`center` (rows × n, the block centres `center_b` repeated `block` times), moved to the
    references' level at their shared edges. `scale_b`: the blocks' scales."""
    if not seasonal:
        return center
    n = center.shape[1]
    with np.errstate(invalid="ignore"):
        hi_b = center_b + edge_z * scale_b
        lo_b = center_b - edge_z * scale_b
        first = seasonal[0][:, :n]
        up, down = _two_of_three_each(
            _beyond(first, hi_b, block, np.greater), _beyond(first, lo_b, block, np.less)
        )
        stepped = up | down
        rows = np.flatnonzero(stepped.any(axis=1))  # few: nonzero on those rows alone
        r, c = np.nonzero(stepped[rows])
        r = rows[r]
        going_up = up[r, c]
        for v in seasonal[1:]:
            agrees = np.where(
                going_up,
                _two_of_three_at(v, hi_b, block, r, c, n, np.greater),
                _two_of_three_at(v, lo_b, block, r, c, n, np.less),
            )
            r, c, going_up = r[agrees], c[agrees], going_up[agrees]
    if r.size == 0:
        return center
    levels = np.stack([_level_at(v, r, c, n) for v in seasonal])
    out = center.copy()
    out[r, c] = np.median(levels, axis=0)
    return out


def _beyond(v: FloatArray, line_b: FloatArray, block: int, compare: Compare) -> BoolArray:
    """`compare(v, line)` at every point, the line being per block (rows × blocks)."""
    rows, n = v.shape
    nb = line_b.shape[1]
    if n != nb * block:
        padded = np.full((rows, nb * block), np.nan)
        padded[:, :n] = v
        v = padded
    out: BoolArray = compare(v.reshape(rows, nb, block), line_b[:, :, None])
    return out.reshape(rows, nb * block)[:, :n]


def _two_of_three_each(up: BoolArray, down: BoolArray) -> tuple[BoolArray, BoolArray]:
    """Per point, whether at least 2 of it and its two neighbours are True (ends repeated), for
    both at once: up counts in the low two bits, down above them. Within a block, where the
    line is flat, that is the median of the three beyond it."""
    both = up.astype(np.int8)
    both += down.astype(np.int8) << 2
    count = _three_sum(both)
    out_up: BoolArray = (count & 3) >= 2
    out_down: BoolArray = (count >> 2) >= 2
    return out_up, out_down


def _three_sum(a: npt.NDArray[np.int8]) -> npt.NDArray[np.int8]:
    """Per point, the sum of it and its two neighbours (ends repeated)."""
    rows, n = a.shape
    p = np.empty((rows, n + 2), dtype=np.int8)
    p[:, 1:-1] = a
    p[:, 0] = a[:, 0]
    p[:, -1] = a[:, -1]
    out: npt.NDArray[np.int8] = p[:, :-2] + p[:, 1:-1] + p[:, 2:]
    return out


def _two_of_three_at(
    v: FloatArray,
    line_b: FloatArray,
    block: int,
    r: IntpArray,
    c: IntpArray,
    n: int,
    compare: Compare,
) -> BoolArray:
    """Whether at least 2 of each point and its neighbours pass `compare` against their own
    block's line, at the given points only (n: the window's length)."""
    count = np.zeros(r.size, dtype=np.int8)
    for k in _trio(c, n):
        count += compare(v[r, k], line_b[r, k // block])
    out: BoolArray = count >= 2
    return out


def _trio(c: IntpArray, n: int) -> tuple[IntpArray, IntpArray, IntpArray]:
    """Each point's neighbours and itself, the ends repeated."""
    return np.maximum(c - 1, 0), c, np.minimum(c + 1, n - 1)


def _level_at(v: FloatArray, r: IntpArray, c: IntpArray, n: int) -> FloatArray:
    """The median of v[r, c - 1 .. c + 1] (ends repeated), at the given points only."""
    trio = np.stack([v[r, k] for k in _trio(c, n)])
    out: FloatArray = np.nanmedian(trio, axis=0)  # ≥ 2 of the 3 are valid here
    return out
