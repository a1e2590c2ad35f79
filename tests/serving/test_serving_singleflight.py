"""Singleflight (async and threaded) and the loading cache built on it."""

from __future__ import annotations

import asyncio
import random
import threading
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from prometheus_client import CollectorRegistry

from infersight.serving import LoadCancelled, LoadingCache, SingleFlight, ThreadSingleFlight


class LoadError(Exception):
    pass


@settings(max_examples=60, deadline=None)
@given(
    st.lists(  # per key: (callers, the load fails?, callers to cancel)
        st.tuples(st.integers(1, 6), st.booleans(), st.sets(st.integers(0, 5))),
        min_size=1,
        max_size=4,
    )
)
def test_one_load_per_key_and_all_callers_share_its_outcome(
    keys: list[tuple[int, bool, set[int]]],
) -> None:
    asyncio.run(_run_flights(keys))


async def _run_flights(keys: list[tuple[int, bool, set[int]]]) -> None:
    sf: SingleFlight[int, object] = SingleFlight(registry=CollectorRegistry())
    loads = dict.fromkeys(range(len(keys)), 0)
    errors = {k: LoadError(k) for k in range(len(keys))}

    def loader(k: int, fails: bool):  # type: ignore[no-untyped-def]
        async def load() -> object:
            loads[k] += 1
            await asyncio.sleep(0.002)
            if fails:
                raise errors[k]
            return ("value", k)

        return load

    tasks: dict[tuple[int, int], asyncio.Task[object]] = {}
    for k, (callers, fails, _) in enumerate(keys):
        for c in range(callers):
            tasks[k, c] = asyncio.create_task(sf.do(k, loader(k, fails)))
    await asyncio.sleep(0)
    cancelled = {(k, c) for k, (callers, _, cs) in enumerate(keys) for c in cs if c < callers}
    for kc in cancelled:
        tasks[kc].cancel()
    outcomes = dict(
        zip(tasks, await asyncio.gather(*tasks.values(), return_exceptions=True), strict=True)
    )

    for k, (callers, fails, _) in enumerate(keys):
        assert loads[k] == 1, "every key is loaded exactly once for its flight"
        for c in range(callers):
            out = outcomes[k, c]
            if (k, c) in cancelled:
                assert isinstance(out, asyncio.CancelledError)
            elif fails:
                assert out is errors[k], "every caller gets the very same exception"
            else:
                assert out == ("value", k)
    assert len(sf) == 0, "no key stays in flight"


async def test_leader_cancelled_load_continues_for_joiners() -> None:
    sf: SingleFlight[str, int] = SingleFlight(registry=CollectorRegistry())
    calls = 0

    async def load() -> int:
        nonlocal calls
        calls += 1
        await asyncio.sleep(0.02)
        return 7

    leader = asyncio.create_task(sf.do("k", load))
    await asyncio.sleep(0)
    joiner = asyncio.create_task(sf.do("k", load))
    await asyncio.sleep(0)
    leader.cancel()
    assert await joiner == 7
    with pytest.raises(asyncio.CancelledError):
        await leader
    assert calls == 1 and not sf.in_flight("k")


async def test_load_cancelled_when_every_caller_left_and_key_freed_at_once() -> None:
    sf: SingleFlight[str, int] = SingleFlight(registry=CollectorRegistry())
    seen_cancel = asyncio.Event()

    async def slow() -> int:
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            seen_cancel.set()
            raise
        return 0

    callers = [asyncio.create_task(sf.do("k", slow)) for _ in range(3)]
    await asyncio.sleep(0)
    for t in callers:
        t.cancel()
    await asyncio.gather(*callers, return_exceptions=True)
    assert not sf.in_flight("k")

    async def fast() -> int:
        return 1

    assert await sf.do("k", fast) == 1
    await asyncio.wait_for(seen_cancel.wait(), timeout=5)


async def test_load_cancelled_from_inside_fails_waiters_with_load_cancelled() -> None:
    sf: SingleFlight[str, int] = SingleFlight(registry=CollectorRegistry())

    async def self_cancelling() -> int:
        task = asyncio.current_task()
        assert task is not None
        task.cancel()
        await asyncio.sleep(1)
        return 0

    outs = await asyncio.gather(
        *(sf.do("k", self_cancelling) for _ in range(3)), return_exceptions=True
    )
    assert all(isinstance(o, LoadCancelled) for o in outs)
    assert not sf.in_flight("k")


@settings(max_examples=15, deadline=None)
@given(st.integers(1, 4), st.integers(1, 6), st.booleans())
def test_thread_singleflight_under_real_threads(n_keys: int, per_key: int, fails: bool) -> None:
    registry = CollectorRegistry()
    sf: ThreadSingleFlight[int, tuple[str, int]] = ThreadSingleFlight(registry=registry)
    loads = [0] * n_keys
    count_lock = threading.Lock()
    errors = [LoadError(k) for k in range(n_keys)]
    total = n_keys * per_key

    def joins() -> float:
        return (
            registry.get_sample_value("infersight_singleflight_joins_total", {"name": "default"})
            or 0
        )

    def loader(k: int):  # type: ignore[no-untyped-def]
        def load() -> tuple[str, int]:
            with count_lock:
                loads[k] += 1
            deadline = time.monotonic() + 10
            while joins() < total - n_keys and time.monotonic() < deadline:  # everyone joined
                time.sleep(0.001)
            if fails:
                raise errors[k]
            return ("v", k)

        return load

    results: dict[tuple[int, int], object] = {}
    barrier = threading.Barrier(total)

    def worker(k: int, i: int) -> None:
        barrier.wait()
        try:
            results[k, i] = sf.do(k, loader(k))
        except LoadError as exc:
            results[k, i] = exc

    threads = [
        threading.Thread(target=worker, args=(k, i)) for k in range(n_keys) for i in range(per_key)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert loads == [1] * n_keys
    for (k, _), res in results.items():
        assert res is errors[k] if fails else res == ("v", k)
    assert len(results) == total
    assert not any(sf.in_flight(k) for k in range(n_keys))


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def test_cache_ttl_with_jitter_and_hit_miss_counts() -> None:
    clock = FakeClock()
    registry = CollectorRegistry()
    loads: list[str] = []

    async def load(key: str) -> str:
        loads.append(key)
        return key.upper()

    cache: LoadingCache[str, str] = LoadingCache(
        load, ttl=10.0, jitter=0.2, clock=clock, rng=random.Random(1), registry=registry
    )
    assert await cache.get("a") == "A"
    assert await cache.get("a") == "A"
    assert loads == ["a"] and (cache.hits, cache.misses) == (1, 1)
    expiry = cache.expires_at("a")
    assert expiry is not None and 1008.0 <= expiry <= 1012.0
    clock.now = expiry
    assert "a" not in cache
    assert await cache.get("a") == "A"
    assert loads == ["a", "a"]
    for k in "bcdefgh":
        await cache.get(k)
    expiries = {cache.expires_at(k) for k in "bcdefgh"}
    assert len(expiries) == 7, "jitter spreads entries loaded together"

    def sample(result: str) -> float | None:
        return registry.get_sample_value(
            "infersight_cache_requests_total", {"name": "default", "result": result}
        )

    assert (sample("hit"), sample("miss")) == (1.0, 9.0)


async def test_cache_evicts_least_recently_used() -> None:
    async def load(key: str) -> str:
        return key

    cache: LoadingCache[str, str] = LoadingCache(
        load, ttl=60, max_entries=3, registry=CollectorRegistry()
    )
    for k in "abc":
        await cache.get(k)
    await cache.get("a")  # a is now the most recent
    await cache.get("d")
    assert "b" not in cache and all(k in cache for k in "acd") and len(cache) == 3


async def test_cache_does_not_keep_errors() -> None:
    attempts = 0

    async def flaky(key: str) -> str:
        nonlocal attempts
        attempts += 1
        if attempts == 1:
            raise LoadError(key)
        return key

    cache: LoadingCache[str, str] = LoadingCache(flaky, ttl=60, registry=CollectorRegistry())
    with pytest.raises(LoadError):
        await cache.get("x")
    assert await cache.get("x") == "x" and attempts == 2


@pytest.mark.parametrize(("coalesce", "expected_loads"), [(True, 1), (False, 20)])
async def test_cache_stampede_on_a_cold_hot_key(coalesce: bool, expected_loads: int) -> None:
    registry = CollectorRegistry()
    peaks: list[float] = []
    loads = 0

    async def load(key: str) -> str:
        nonlocal loads
        loads += 1
        await asyncio.sleep(0.01)
        peaks.append(
            registry.get_sample_value("infersight_cache_concurrent_loads", {"name": "default"}) or 0
        )
        return key

    cache: LoadingCache[str, str] = LoadingCache(load, ttl=60, coalesce=coalesce, registry=registry)
    assert await asyncio.gather(*(cache.get("hot") for _ in range(20))) == ["hot"] * 20
    assert loads == expected_loads
    assert max(peaks) == expected_loads
    assert registry.get_sample_value("infersight_cache_concurrent_loads", {"name": "default"}) == 0
