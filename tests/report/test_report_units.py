"""Human units: every canonical unit, edge values, and never an exponent for ordinary figures."""

from __future__ import annotations

import math
from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from infersight.units import (
    format_change,
    format_clock,
    format_confidence,
    format_duration,
    format_timestamp,
    format_value,
    format_window,
)


@pytest.mark.parametrize(
    ("value", "unit", "text"),
    [
        (0.38, "s", "380 ms"),
        (4.1, "s", "4.1 s"),
        (0.02, "s", "20 ms"),
        (0.0000525, "s", "52.5 µs"),
        (0.0, "s", "0 s"),
        (90.0, "s", "90 s"),
        (900.0, "s", "15 min"),
        (10800.0, "s", "3 h"),
        (0.95, "ratio", "95%"),
        (0.001, "ratio", "0.1%"),
        (0.05, "ratio", "5%"),
        (1.0, "ratio", "100%"),
        (0.0001, "ratio", "0.01%"),
        (57.6 * 2**30, "bytes", "57.6 GiB"),
        (512.0, "bytes", "512 B"),
        (1.5 * 2**20, "bytes", "1.5 MiB"),
        (2.0 * 2**40, "bytes", "2 TiB"),
        (83.0, "celsius", "83 °C"),
        (1980.0, "MHz", "1,980 MHz"),
        (350.0, "W", "350 W"),
        (180.0, "count", "180"),
        (12345.0, "count", "12,345"),
        (2400.0, "per_s", "2,400/s"),
        (12.34, "per_s", "12.3/s"),
        (3.5, "cores", "3.5 cores"),
        (79.0, "code", "79"),
        (-0.2, "s", "-200 ms"),
        (7.0, "widgets", "7 widgets"),
        (7.0, "", "7"),
        (0.0002, "per_s", "≈0/s"),
        (1e-9, "s", "≈0 s"),
        (None, "s", "n/a"),
        (math.nan, "ratio", "n/a"),
        (math.inf, "bytes", "n/a"),
    ],
)
def test_format_value(value: float | None, unit: str, text: str) -> None:
    assert format_value(value, unit) == text


UNITS = ["s", "ratio", "bytes", "celsius", "MHz", "W", "count", "per_s", "cores", "code", ""]


@given(st.floats(min_value=-1e12, max_value=1e12, allow_nan=False), st.sampled_from(UNITS))
def test_ordinary_figures_have_no_exponent(value: float, unit: str) -> None:
    text = format_value(value, unit)
    assert "e+" not in text and "e-" not in text, text
    assert text and text != "n/a"


def test_change_and_confidence() -> None:
    assert format_change(0.02, 0.8, "s") == "20 ms → 800 ms"
    assert format_change(None, 0.8, "s") == "800 ms"
    assert format_change(0.02, None, "s") == "20 ms → n/a"
    assert format_change(None, None, "s") == ""
    assert format_confidence(0.874) == "87%"
    assert format_confidence(1.7) == "100%"
    assert format_confidence(math.nan) == "n/a"


def test_times_are_utc() -> None:
    ts = datetime(2024, 5, 14, 2, 17, 30, tzinfo=UTC).timestamp()
    assert format_clock(ts) == "02:17"
    assert format_clock(ts, seconds=True) == "02:17:30"
    assert format_clock(None) == "n/a"
    assert format_timestamp(ts) == "2024-05-14 02:17:30 UTC"
    assert format_window(ts, ts + 3600) == "2024-05-14 02:17–03:17 UTC (60 min)"
    assert format_window(ts, ts + 86400) == "2024-05-14 02:17–2024-05-15 02:17 UTC (24 h)"
    assert [format_duration(s) for s in (45, 900, 5400, 3 * 86400)] == [
        "45 s", "15 min", "90 min", "3 d"
    ]  # fmt: skip
