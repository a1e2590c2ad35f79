"""String columns read as codes: a hand-made dictionary that Parquet would not produce
(pyarrow's writer merges repeated names) still reads each name once, and a null name is refused."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from infersight.bundle.table import _codes


def _table(codes: list[int], names: list[str | None]) -> pa.Table:
    col = pa.DictionaryArray.from_arrays(pa.array(codes, pa.int32()), pa.array(names, pa.string()))
    return pa.table({"signal": col})


def test_repeated_dictionary_names_read_as_one() -> None:
    idx, names = _codes(_table([0, 1, 2, 3, 2], ["a", "b", "a", "c"]), "signal")
    assert names == ["a", "b", "c"]
    assert [names[i] for i in idx] == ["a", "b", "a", "c", "a"]


def test_unused_null_name_is_harmless_and_used_one_is_refused() -> None:
    idx, names = _codes(_table([0, 1], ["a", "b", None]), "signal")
    assert [names[i] for i in idx] == ["a", "b"]
    with pytest.raises(ValueError, match="column 'signal' has nulls"):
        _codes(_table([0, 2], ["a", "b", None]), "signal")


def test_plain_strings_read_the_same() -> None:
    idx, names = _codes(pa.table({"signal": pa.array(["x", "y", "x"])}), "signal")
    assert np.array_equal(idx, [0, 1, 0]) and names == ["x", "y"]
