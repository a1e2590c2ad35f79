"""JSON parsed only after its nesting is known to be within `Limits.json_depth`.

Python's parser recurses per level and raises RecursionError near 1,000 levels; a hostile
manifest or server answer must instead be refused with one line. The depth is measured on the
raw bytes (brackets inside strings do not count), in chunks, with numpy.
"""

from __future__ import annotations

import json
import re
from typing import Any

import numpy as np

_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)
_CHUNK = 1 << 20
_QUOTE = ord('"')
_OPEN = np.zeros(256, dtype=np.int8)
_OPEN[[ord("["), ord("{")]] = 1
_OPEN[[ord("]"), ord("}")]] = -1


class JSONDepthError(ValueError):
    """The document nests deeper than the limit."""


def depth(data: bytes) -> int:
    """Deepest nesting of brackets outside strings (1 for `[1]`, 0 for `1`)."""
    if b"\\" in data:  # escaped quotes: find the strings with the (slower) regex
        data = _STRING.sub(b'""', data)
    deepest, level, quotes = 0, 0, 0
    for i in range(0, len(data), _CHUNK):
        arr = np.frombuffer(data, dtype=np.uint8, count=min(_CHUNK, len(data) - i), offset=i)
        # without backslashes every quote opens or closes a string: odd parity is inside one
        parity = (np.cumsum(arr == _QUOTE, dtype=np.int64) + quotes) & 1
        steps = np.cumsum(_OPEN[arr] * (parity == 0), dtype=np.int64) + level
        deepest = max(deepest, int(steps.max()))
        level, quotes = int(steps[-1]), int(parity[-1])
    return deepest


def loads(data: str | bytes, max_depth: int) -> Any:
    """json.loads, after refusing nesting deeper than `max_depth` (JSONDepthError).

    Raises json.JSONDecodeError / UnicodeDecodeError as json.loads does.
    """
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    found = depth(raw)
    if found > max_depth:
        raise JSONDepthError(f"nested {found} levels deep, over the limit of {max_depth}")
    try:
        return json.loads(data)
    except RecursionError:  # only if the limit was raised past what the parser can take
        raise JSONDepthError(f"nested too deep for the parser ({found} levels)") from None
