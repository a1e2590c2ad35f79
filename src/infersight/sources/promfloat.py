"""Float formatting as Prometheus does it, shared by the exposition parser and writer.

`label_float` gives the canonical form of `le` and `quantile` label values, the one Prometheus 3
normalises to (`FormatOpenMetricsFloat`: Go's shortest `%g`, plus `.0` when that reads as an
integer): `1`, `1.0` and `1e0` all become `"1.0"`, `0.25` stays `"0.25"`, `1000000` becomes
`"1e+06"`, `0.00001` becomes `"1e-05"`, infinities are `"+Inf"`/`"-Inf"`. `sample_float` spells a
sample value so that it parses back to the same float (`NaN`, `+Inf`, `-Inf` as the exposition
formats want them).
"""

from __future__ import annotations

import math
from decimal import Decimal

#: Go's shortest %g switches to exponent notation from this decimal exponent on.
_GO_EPREC = 6


def _go_shortest_g(x: float) -> str:
    """strconv.FormatFloat(x, 'g', -1, 64) for a finite, non-zero x."""
    _, digit_tuple, exponent = Decimal(repr(abs(x))).normalize().as_tuple()
    assert isinstance(exponent, int)
    digits = "".join(map(str, digit_tuple))
    exp = len(digits) + exponent - 1  # decimal exponent of the first digit
    neg = "-" if x < 0 else ""
    if exp < -4 or exp >= _GO_EPREC:
        mant = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return f"{neg}{mant}e{'-' if exp < 0 else '+'}{abs(exp):02d}"
    if exp < 0:
        return f"{neg}0.{'0' * (-exp - 1)}{digits}"
    if len(digits) <= exp + 1:
        return f"{neg}{digits}{'0' * (exp + 1 - len(digits))}"
    return f"{neg}{digits[: exp + 1]}.{digits[exp + 1 :]}"


def label_float(x: float) -> str:
    """Canonical text of a float label value (`le`, `quantile`), as Prometheus 3 writes it."""
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "+Inf" if x > 0 else "-Inf"
    if x == 0:
        return "0.0"  # -0.0 too, as Prometheus
    s = _go_shortest_g(x)
    return s if ("." in s or "e" in s) else s + ".0"


def sample_float(x: float) -> str:
    """A sample value as exposition text that parses back to exactly x."""
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "+Inf" if x > 0 else "-Inf"
    return repr(x)
