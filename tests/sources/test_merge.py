import math

import numpy as np
import pytest

from infersight.sources.merge import combine_rows, first_family_wins, rows_by_identity


@pytest.mark.parametrize(
    ("how", "expected"),
    [("sum", [4.0, 1.0]), ("mean", [2.0, 1.0]), ("max", [3.0, 1.0]), ("min", [1.0, 1.0])],
)
def test_combine_rows_is_nan_aware(how: str, expected: list[float]) -> None:
    rows = np.array([[1.0, np.nan, np.nan], [3.0, 1.0, np.nan]])
    out = combine_rows(rows, how)  # type: ignore[arg-type]
    assert out[:2].tolist() == expected and math.isnan(out[2])


def test_rows_by_identity_merges_one_host_and_drops_non_finite() -> None:
    rows = rows_by_identity(
        [
            ({"instance": "node-1:9400", "Hostname": "node-1", "gpu": "0"}, np.array([0.2, 0.4])),
            (
                {"instance": "node-1:9400", "Hostname": "node-1", "gpu": "1"},
                np.array([0.6, np.inf]),
            ),
            ({"instance": "node-2:9400"}, np.array([np.nan, np.nan])),
        ],
        "mean",
    )
    assert list(rows) == ["node-1"]  # an all-gap series contributes no instance
    np.testing.assert_allclose(rows["node-1"], [0.4, 0.4])


def test_first_family_wins_per_identity() -> None:
    rows, used = first_family_wins(
        [
            ("vllm", {"a": np.array([1.0])}),
            ("triton", {"a": np.array([9.0]), "b": np.array([2.0])}),
            ("tgi", {"b": np.array([7.0])}),
        ]
    )
    assert rows["a"].tolist() == [1.0] and rows["b"].tolist() == [2.0]
    assert used == ["vllm", "triton"]
