"""Daily edges: the block-wise, sparse computation agrees with the plain definition."""

from __future__ import annotations

import numpy as np
import pytest

from infersight.detect.edges import follow_edges


def _plain(
    center: np.ndarray, scale: np.ndarray, seasonal: list[np.ndarray], z: float
) -> np.ndarray:
    """The definition, point by point: in every reference, at least 2 of the point and its
    neighbours lie beyond their own line (ends repeated), on the same side; the centre moves to
    the median of the references' medians of those 3."""
    rows, n = center.shape
    hi, lo = center + z * scale, center - z * scale
    out = center.copy()
    for r in range(rows):
        for c in range(n):
            trio = [max(c - 1, 0), c, min(c + 1, n - 1)]
            ups = [sum(v[r, k] > hi[r, k] for k in trio) >= 2 for v in seasonal]
            downs = [sum(v[r, k] < lo[r, k] for k in trio) >= 2 for v in seasonal]
            if all(ups) or all(downs):
                out[r, c] = np.median([np.median(v[r, trio]) for v in seasonal])
    return out


@pytest.mark.parametrize(("n", "block", "refs"), [(48, 8, 2), (45, 8, 2), (30, 5, 1), (40, 8, 3)])
def test_follow_edges_matches_the_definition(n: int, block: int, refs: int) -> None:
    rng = np.random.default_rng(n + refs)
    rows = 6
    nb = -(-n // block)
    center_b = rng.uniform(5, 15, (rows, nb))
    scale_b = rng.uniform(0.2, 1.0, (rows, nb))
    center = np.repeat(center_b, block, axis=1)[:, :n]
    scale = np.repeat(scale_b, block, axis=1)[:, :n]
    # Shared steps around the lines, every few points, crossing block boundaries; rows 0 and
    # 3 stay inside them.
    shared = center + 3.0 * scale * rng.uniform(-2.5, 2.5, (rows, n))
    shared[::3] = center[::3]
    seasonal = [shared + rng.normal(0, 0.05, (rows, n)) for _ in range(refs)]
    got = follow_edges(center, center_b, scale_b, block, seasonal, 3.0)
    want = _plain(center, scale, seasonal, 3.0)
    np.testing.assert_array_equal(got, want)
    moved = got != center
    assert moved[1:3].any() and moved[4:].any()
    assert not moved[::3].any()
