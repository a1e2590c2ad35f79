"""Figures written one way in every report, whoever wrote the sentence they sit in.

Evidence sentences come from the engine; a ratio there may read "63.45×" or "1.06e+03×" and a
shift "100.0 σ". Reports rewrite those figures with the same formatter as their own
(`units.format_ratio`: "63.5×", "1,060×"), so a reader never meets an exponent.
"""

from __future__ import annotations

import re

from infersight.units import format_ratio

_RATIO = re.compile(r"(?<![\w.,])(\d+(?:\.\d+)?(?:e[+-]?\d+)?)×")
_SIGMA = re.compile(r"(?<![\w.,])(\d+(?:\.\d+)?(?:e[+-]?\d+)?) σ")
_SCORE_CAP = 100.0


def _sigma(text: str) -> str:
    value = float(text)
    return f"{value:.3g}" if value < 1000 else f"{value:,.0f}"


def tidy(statement: str) -> str:
    """`statement` with its ratios and shifts in the one format: "(1.06e+03×)" → "(1,060×)",
    "(63.45×)" → "(63.5×)", "shift 100.0 σ" → "shift 100 σ"."""
    out = _RATIO.sub(lambda m: format_ratio(float(m.group(1))) or m.group(0), statement)
    return _SIGMA.sub(lambda m: _sigma(m.group(1)) + " σ", out)


def format_score(score: float) -> str:
    """An unexplained change's strength: "7.5", "42"; the engine's cap reads "≥ 100", never
    "1e+02"."""
    if score >= _SCORE_CAP:
        return f"≥ {_SCORE_CAP:g}"
    return f"{score:.2g}" if score < 10 else f"{score:.0f}"
