"""Steady open-loop load for the live lab: requests arrive as a Poisson process at the given
rate whatever the answers do (a slow server does not slow the arrivals; periodic arrivals
would hide queueing that independent users cause), to loopback only, bounded in count, time
and concurrency.

    infersight lab load --rate 8 --duration 5m --dir lab
"""

from __future__ import annotations

import asyncio
import itertools
import random
import time
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import httpx

MAX_RATE = 200.0
MAX_DURATION_S = 6 * 3600.0
MAX_IN_FLIGHT = 256


def check_loopback(url: str) -> None:
    """ValueError unless `url` is http:// or https:// on a loopback host."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https"):
        raise ValueError(f"{url!r}: load goes to http:// or https:// URLs only")
    host = parts.hostname or ""
    if host not in ("127.0.0.1", "localhost", "::1"):
        raise ValueError(f"load goes to loopback only, not {host or url!r}")


def questions(n: int = 2000) -> list[str]:
    topics = ("gpu", "cache", "batching", "latency", "vector", "redis", "queue", "clock")
    return [f"how does {topics[i % len(topics)]} {i} work" for i in range(n)]


@dataclass
class LoadResult:
    sent: int = 0
    ok: int = 0
    failed: int = 0
    skipped: int = 0  # not sent: too many requests already in flight
    latencies: list[float] = field(default_factory=list)


async def run_load(
    url: str, rate: float, duration_s: float, zipf_s: float = 1.0, seed: int = 0
) -> LoadResult:
    """`rate` requests/s for `duration_s` to `url`/v1/answer, questions drawn Zipf-like
    (a few popular, a long tail: with the API's 60 s cache TTL about half are hits)."""
    check_loopback(url)
    if not 0 < rate <= MAX_RATE or not 0 < duration_s <= MAX_DURATION_S:
        raise ValueError(f"rate must be in (0, {MAX_RATE:.0f}] and duration in (0, 6 h]")
    rng = random.Random(seed)
    qs = questions()
    cum = list(itertools.accumulate(1.0 / (i + 1) ** zipf_s for i in range(len(qs))))
    res = LoadResult()
    in_flight: set[asyncio.Task[None]] = set()
    limits = httpx.Limits(max_connections=MAX_IN_FLIGHT, max_keepalive_connections=32)
    async with httpx.AsyncClient(timeout=15.0, trust_env=False, limits=limits) as http:

        async def one(q: str) -> None:
            t0 = time.perf_counter()
            try:
                r = await http.get(url + "/v1/answer", params={"q": q})
                good = r.status_code == 200
            except httpx.HTTPError:
                good = False
            res.latencies.append(time.perf_counter() - t0)
            if good:
                res.ok += 1
            else:
                res.failed += 1

        start = time.monotonic()
        at = 0.0
        for _ in range(int(rate * duration_s * 2) + 10):  # a bound; the duration ends it first
            at += rng.expovariate(rate)  # Poisson arrivals, as independent users make
            if at >= duration_s:
                break
            delay = start + at - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
            if len(in_flight) >= MAX_IN_FLIGHT:
                res.skipped += 1
                continue
            q = rng.choices(qs, cum_weights=cum)[0]
            task = asyncio.create_task(one(q))
            in_flight.add(task)
            task.add_done_callback(in_flight.discard)
            res.sent += 1
        if in_flight:
            await asyncio.wait(in_flight, timeout=20.0)
    return res
