"""A burst of demand that passed takes with it what rose and fell inside it (seed §6.1); a
change that outlasts it, is still going, or came without one is reported."""

from __future__ import annotations

from synth import FloatArray, noisy, windows

from infersight.detect import detect

RATE = "service.request_rate"
LAT = "service.e2e_latency_p99"
BURST = (100, 124)  # six minutes at 15 s


def _bump(level: float, factor: float, span: tuple[int, int], rel: float = 0.02) -> object:
    base = noisy(level, rel)

    def gen(t: FloatArray, i: int) -> FloatArray:
        v = base(t, i).copy()
        v[span[0] : span[1]] *= factor
        return v

    return gen


def _found(rate_span: tuple[int, int] | None, lat_span: tuple[int, int]) -> set[str]:
    base = {RATE: noisy(10.0, 0.02), LAT: noisy(0.3, 0.02)}
    inc = {LAT: _bump(0.3, 1.8, lat_span)}
    if rate_span is not None:
        inc[RATE] = _bump(10.0, 1.6, rate_span)
    r = detect(windows(base, incident=inc))  # type: ignore[arg-type]
    return {a.signal for a in r.anomalies}


def test_latency_that_rode_a_passing_burst_is_not_a_finding() -> None:
    assert _found(BURST, (102, 126)) == set()


def test_the_same_latency_without_a_burst_is_a_finding() -> None:
    assert LAT in _found(None, (102, 126))


def test_latency_that_outlasts_the_burst_is_a_finding() -> None:
    assert LAT in _found(BURST, (102, 170))


def test_latency_still_up_at_the_end_is_a_finding() -> None:
    # a burst and its latency both still going when the window ends: not known to pass
    assert LAT in _found((220, 240), (222, 240))


def test_a_burst_that_left_a_mark_sets_nothing_aside() -> None:
    """The pass time rose and fell with the burst, but the latency that began with it stayed
    up: the burst did harm (past the batch knee), and what rose with it is the evidence."""
    fwd = "inference.forward_time_p99"
    base = {RATE: noisy(10.0, 0.02), LAT: noisy(0.3, 0.02), fwd: noisy(0.06, 0.02)}
    inc = {RATE: _bump(10.0, 1.6, BURST), fwd: _bump(0.06, 2.4, (102, 126))}
    r = detect(windows(base, incident=inc))  # type: ignore[arg-type]
    assert fwd not in {a.signal for a in r.anomalies}
    inc[LAT] = _bump(0.3, 1.8, (102, 190))
    r = detect(windows(base, incident=inc))  # type: ignore[arg-type]
    assert {fwd, LAT} <= {a.signal for a in r.anomalies}


def test_an_io_stall_inside_the_burst_is_a_mark_it_left() -> None:
    """Logs written per request saturate the disk at the burst's peak: the IO stall is no
    queueing a healthy service rides, so the latency that rose with it stays a finding."""
    io = "infra.io_pressure"
    base = {RATE: noisy(10.0, 0.02), LAT: noisy(0.3, 0.02), io: noisy(0.02, 0.02)}
    inc = {RATE: _bump(10.0, 1.6, BURST), LAT: _bump(0.3, 1.8, (102, 126))}
    assert LAT not in {a.signal for a in detect(windows(base, incident=inc)).anomalies}  # type: ignore[arg-type]
    inc[io] = _bump(0.02, 15.0, (102, 126))
    found = {a.signal for a in detect(windows(base, incident=inc)).anomalies}  # type: ignore[arg-type]
    assert {io, LAT} <= found
