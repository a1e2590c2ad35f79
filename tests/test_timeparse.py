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


@pytest.mark.parametrize("bad", ["nan", "inf", "-inf", "1e999", "NaN"])
def test_non_finite_durations_are_refused(bad: str) -> None:
    # float() accepts these; a NaN window used to reach frame.grid as a traceback
    with pytest.raises(ValueError, match="not a duration"):
        parse_duration(bad)


@pytest.mark.parametrize("bad", ["nan", "inf", "-inf", "1e20"])
def test_non_finite_or_unshowable_times_are_refused(bad: str) -> None:
    with pytest.raises(ValueError, match="not a time"):
        parse_time(bad, 1_800_000_000.0)


def test_now_minus_a_non_finite_duration_is_refused() -> None:
    with pytest.raises(ValueError, match="not a duration"):
        parse_time("now-inf", 1_800_000_000.0)


@pytest.mark.parametrize(
    "text",
    ["now-1e300", "now-99999999999999s", "-62135596801", "0001-01-01T00:00:00+01:00", "1e12"],
)
def test_times_outside_years_1_to_9999_are_one_line_errors(text: str) -> None:
    with pytest.raises(ValueError, match=r"years 1-9999|not a time") as exc:
        parse_time(text, 1_800_000_000.0)
    assert "\n" not in str(exc.value)


def test_an_epoch_in_milliseconds_gets_a_hint() -> None:
    with pytest.raises(ValueError, match="looks like milliseconds"):
        parse_time("1764000000000", 1_800_000_000.0)


def test_iso_of_an_out_of_range_epoch_is_not_an_error() -> None:
    assert iso(1e20) == "1e+20"
