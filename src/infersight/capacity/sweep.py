"""An open-loop sweep: at each step, requests leave on a fixed schedule whatever the server
does, so a slow server cannot slow the generator down and hide its own queue (no coordinated
omission). A request's latency runs from its scheduled departure, so a late send counts too.

Each step's rate follows Little's law: the step's in-flight level divided by one request's
latency at that step, timed by a few sequential probes first. For a concurrency sweep the
level is the concurrency; for a batch sweep it is `in_flight` (default 1: the device is kept
exactly busy, so throughput is what a batch of that size delivers). Throughput counts the
items of successful responses that finished inside the measured part of the step.
"""

from __future__ import annotations

import asyncio
import itertools
import math
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx

from infersight.capacity.config import DEFAULT_CONFIG, CapacityConfig
from infersight.capacity.results import Axis, Point, Sweep
from infersight.capacity.targets import Target


class SweepError(RuntimeError):
    """The endpoint cannot be swept (unreachable, every probe failed); one line."""


@dataclass
class StepLog:
    """What one step's generator did, for the overhead benchmark and the report."""

    level: float
    rate: float
    sent: int = 0
    ok: int = 0
    failed: int = 0
    dropped: int = 0  # not sent: max_outstanding requests were already in flight
    lags: list[float] = field(default_factory=list)  # actual send − scheduled, seconds
    latencies: list[float] = field(default_factory=list)
    done_in_window: int = 0  # items of successes that finished inside the measured window
    finished: list[float] = field(default_factory=list)  # their finishing times
    window: float = 0.0  # the measured window's length, seconds

    def to_dict(self) -> dict[str, Any]:
        lag = sorted(self.lags)
        return {
            "level": self.level,
            "rate": self.rate,
            "sent": self.sent,
            "ok": self.ok,
            "failed": self.failed,
            "dropped": self.dropped,
            "lag_p50_s": _q(lag, 0.50),
            "lag_p99_s": _q(lag, 0.99),
        }


def _q(sorted_vals: Sequence[float], q: float) -> float | None:
    """The q-quantile by the nearest rank (None when empty)."""
    if not sorted_vals:
        return None
    k = min(len(sorted_vals) - 1, max(0, math.ceil(q * len(sorted_vals)) - 1))
    return float(sorted_vals[k])


_counter = itertools.count()


async def _send(client: httpx.AsyncClient, target: Target, batch: int) -> bool:
    req = target.request(batch, next(_counter))
    r = await client.request(req.method, req.url, json=req.body)
    return 200 <= r.status_code < 300


async def probe(client: httpx.AsyncClient, target: Target, batch: int, count: int) -> float:
    """Median latency of `count` sequential requests; SweepError when none succeeds."""
    times, last = [], ""
    for _ in range(count):
        t0 = time.perf_counter()
        try:
            ok = await _send(client, target, batch)
        except httpx.HTTPError as exc:
            ok, last = False, f"{type(exc).__name__}: {exc}"
        if ok:
            times.append(time.perf_counter() - t0)
        elif not last:
            last = "a non-2xx answer"
    if not times:
        raise SweepError(f"{target.url}: every probe at batch {batch} failed ({last})")
    return statistics.median(times)


async def run_step(
    client: httpx.AsyncClient,
    target: Target,
    batch: int,
    rate: float,
    level: float,
    config: CapacityConfig,
) -> StepLog:
    """One step: `rate` requests/s of `batch` items for `config.step_seconds`."""
    log = StepLog(level, rate, window=config.step_seconds - config.warmup_seconds)
    interval = 1.0 / rate
    n = max(1, int(config.step_seconds * rate))
    loop = asyncio.get_running_loop()
    t0 = loop.time() + 0.01
    w0, w1 = t0 + config.warmup_seconds, t0 + config.step_seconds
    tasks: set[asyncio.Task[None]] = set()

    async def one(scheduled: float) -> None:
        try:
            ok = await asyncio.wait_for(_send(client, target, batch), config.request_timeout)
        except (httpx.HTTPError, TimeoutError):
            ok = False
        end = loop.time()
        if ok:
            log.ok += 1
            if scheduled >= w0:
                log.latencies.append(end - scheduled)
            if w0 <= end <= w1:
                log.done_in_window += batch
                log.finished.append(end)
        else:
            log.failed += 1

    for i in range(n):
        scheduled = t0 + i * interval
        delay = scheduled - loop.time()
        if delay > 0:
            await asyncio.sleep(delay)
        if len(tasks) >= config.max_outstanding:
            log.dropped += 1
            continue
        log.lags.append(max(0.0, loop.time() - scheduled))
        task = asyncio.ensure_future(one(scheduled))
        tasks.add(task)
        task.add_done_callback(tasks.discard)
        log.sent += 1
    if tasks:
        await asyncio.wait(set(tasks), timeout=config.request_timeout)
    for task in list(tasks):  # past the timeout: failed, and not left running
        task.cancel()
    return log


def throughput(log: StepLog, batch: int) -> float:
    """Items per second: the rate between the first and last success finishing in the
    window (a count over the window is coarse when a step holds a few dozen large batches),
    the count over the window where fewer than three finished."""
    done = sorted(log.finished)
    if len(done) >= 3 and done[-1] > done[0]:
        return (len(done) - 1) * batch / (done[-1] - done[0])
    return log.done_in_window / log.window if log.window > 0 else 0.0


def _point(x: float, log: StepLog, batch: int) -> Point:
    lat = sorted(log.latencies)
    latency = {
        name: _q(lat, q) for name, q in (("p50", 0.5), ("p90", 0.9), ("p95", 0.95), ("p99", 0.99))
    }
    errors = log.failed + log.dropped
    return Point(x, throughput(log, batch), latency, log.sent, errors)


async def asweep(
    target: Target,
    axis: Axis,
    levels: Sequence[int],
    in_flight: int = 1,
    config: CapacityConfig = DEFAULT_CONFIG,
    progress: Callable[[int, int], None] | None = None,
) -> tuple[Sweep, list[StepLog]]:
    """Sweep `levels` (batch sizes or concurrencies) in order; the curve and each step's log."""
    if axis not in ("batch", "concurrency"):
        raise ValueError(f"a sweep steps batch or concurrency, not {axis!r}")
    if not levels or any(v < 1 for v in levels) or list(levels) != sorted(set(levels)):
        raise ValueError("levels must be distinct positive integers in increasing order")
    if in_flight < 1:
        raise ValueError("in flight must be at least 1")
    if config.warmup_seconds >= config.step_seconds:
        raise ValueError("the warmup must be shorter than a step")
    limits = httpx.Limits(max_connections=config.max_outstanding, max_keepalive_connections=256)
    points, logs, notes = [], [], []
    async with httpx.AsyncClient(limits=limits, timeout=config.request_timeout) as client:
        base = None
        for i, level in enumerate(levels):
            batch = level if axis == "batch" else 1
            if axis == "batch" or base is None:
                base = await probe(client, target, batch, config.probe_requests)
            depth = in_flight if axis == "batch" else level
            rate = depth / base
            log = await run_step(client, target, batch, rate, float(level), config)
            points.append(_point(float(level), log, batch))
            logs.append(log)
            if progress is not None:
                progress(i + 1, len(levels))
            failed = log.failed + log.dropped
            if failed > config.stop_error_share * max(log.sent + log.dropped, 1):
                notes.append(
                    f"stopped after {level:g}: {failed} of {log.sent + log.dropped} requests "
                    "failed; further steps would measure the overload's aftermath, not capacity"
                )
                break
    unit = "items/s" if axis == "batch" else "req/s"
    note = f"open loop, {config.step_seconds:g} s a step ({config.warmup_seconds:g} s warmup)"
    return Sweep(axis, tuple(points), "plain", unit, (note, *notes)), logs


def sweep(
    target: Target,
    axis: Axis,
    levels: Sequence[int],
    in_flight: int = 1,
    config: CapacityConfig = DEFAULT_CONFIG,
    progress: Callable[[int, int], None] | None = None,
) -> tuple[Sweep, list[StepLog]]:
    """Sync facade of `asweep`, for the CLI."""
    return asyncio.run(asweep(target, axis, levels, in_flight, config, progress))
