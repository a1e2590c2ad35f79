import pytest

from infersight.timeparse import iso, parse_duration, parse_time, promql_duration


def test_durations() -> None:
    assert parse_duration("90s") == 90
    assert parse_duration("1h30m") == 5400
    assert parse_duration("15") == 15
    assert parse_duration("250ms") == 0.25
    for bad in ("", "5x", "-5m", "0"):
        with pytest.raises(ValueError):
            parse_duration(bad)


def test_promql_duration() -> None:
    assert promql_duration(300) == "5m"
    assert promql_duration(90) == "90s"
    assert promql_duration(86400) == "1d"
    assert promql_duration(0.25) == "250ms"


def test_times() -> None:
    now = 1_800_000_000.0
    assert parse_time("now", now) == now
    assert parse_time("now-2h", now) == now - 7200
    assert parse_time("1700000000", now) == 1_700_000_000
    assert parse_time("2026-12-02T02:17:00Z", now) == parse_time("2026-12-02T02:17:00", now)
    assert iso(parse_time("2026-12-02T02:17:00+00:00", now)) == "2026-12-02T02:17:00Z"
    with pytest.raises(ValueError, match="not a time"):
        parse_time("yesterday", now)
