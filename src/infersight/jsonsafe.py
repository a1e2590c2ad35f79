"""Strict JSON: NaN and ±inf are not JSON, so they leave as null."""

from __future__ import annotations

import math
from typing import Any


def finite(value: Any) -> Any:
    """The value with every non-finite float replaced by None; containers are walked."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(k): finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [finite(v) for v in value]
    return value
