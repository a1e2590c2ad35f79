"""The serving admin endpoint: read and change the batching window's cap and the admission
limits of running batchers and controllers; loopback only without a token, bearer token with
one; a bad change is refused whole."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest
from prometheus_client import CollectorRegistry
from starlette.applications import Starlette

from infersight.serving import (
    AdaptiveBatcher,
    AdmissionController,
    FixedWindowBatcher,
    ServingControls,
    install_serving_admin,
)


async def _echo(items: list[int]) -> list[int]:
    return items


def _client(app: Starlette, host: str = "127.0.0.1", **kw: Any) -> httpx.AsyncClient:
    transport = httpx.ASGITransport(app=app, client=(host, 40000))
    return httpx.AsyncClient(transport=transport, base_url="http://svc", **kw)


async def test_shrinks_a_fixed_window_and_caps_admission() -> None:
    reg = CollectorRegistry()
    fixed = FixedWindowBatcher(_echo, max_queue_delay=0.25, max_queue_wait=5.0, registry=reg)
    pool = AdmissionController(8, max_queue=64, name="api_workers", registry=reg)
    loop = asyncio.get_running_loop()
    t0 = loop.time()
    assert await fixed.submit(1) == 1  # a lone request waits out the whole window
    before = loop.time() - t0
    app = Starlette()
    install_serving_admin(
        app, ServingControls(lambda: {"llm": fixed}, lambda: {"api_workers": pool})
    )
    async with _client(app) as c:
        state = (await c.get("/admin/serving")).json()
        assert state["batchers"]["llm"]["window_cap_s"] == 0.25
        r = await c.post("/admin/serving", json={"batcher": "llm", "window_cap_s": 0.002})
        assert r.status_code == 200 and r.json()["batchers"]["llm"]["window_cap_s"] == 0.002
        r = await c.post(
            "/admin/serving",
            json={"admission": "api_workers", "max_concurrency": 2, "max_queue": 4},
        )
        assert r.json()["admissions"]["api_workers"] == {
            "max_concurrency": 2, "max_queue": 4, "max_wait_s": 1.0,
        }  # fmt: skip
    assert reg.get_sample_value("infersight_batch_window_seconds", {"name": "default"}) == 0.002
    assert reg.get_sample_value("infersight_workers_limit", {"name": "api_workers"}) == 2
    # the shorter window is what a lone request now waits (a ratio within this run)
    t0 = loop.time()
    assert await fixed.submit(1) == 1
    assert (loop.time() - t0) * 4 < before
    await fixed.close()


async def test_lower_concurrency_applies_as_holders_leave_and_higher_admits_waiters() -> None:
    pool = AdmissionController(2, max_queue=10, max_wait=5.0, registry=CollectorRegistry())
    release = asyncio.Event()
    inside = 0
    most = 0

    async def hold() -> None:
        nonlocal inside, most
        async with pool.admit():
            inside += 1
            most = max(most, inside)
            await release.wait()
            inside -= 1

    tasks = [asyncio.create_task(hold()) for _ in range(6)]
    await asyncio.sleep(0.01)
    assert pool.busy == 2 and pool.queued == 4
    pool.reconfigure(max_concurrency=4)  # two waiters get the new slots at once
    await asyncio.sleep(0.01)
    assert pool.busy == 4 and pool.queued == 2 and inside == 4
    pool.reconfigure(max_concurrency=1)
    release.set()
    await asyncio.gather(*tasks)
    assert pool.busy == 0 and pool.queued == 0


async def test_access_is_loopback_or_token_and_bad_changes_change_nothing() -> None:
    adaptive = AdaptiveBatcher(
        _echo, max_wait=0.01, max_queue_wait=1.0, registry=CollectorRegistry()
    )
    open_app, locked_app = Starlette(), Starlette()
    install_serving_admin(open_app, ServingControls(lambda: {"embed": adaptive}))
    token = "t" * 24
    install_serving_admin(locked_app, ServingControls(lambda: {"embed": adaptive}, token=token))
    async with _client(open_app, host="10.1.2.3") as c:
        r = await c.post("/admin/serving", json={"batcher": "embed", "window_cap_s": 0.001})
        assert r.status_code == 403 and "loopback" in r.json()["error"]
    async with _client(locked_app, host="10.1.2.3") as c:
        assert (await c.get("/admin/serving")).status_code == 403
        bad = {"Authorization": "Bearer " + "x" * 24}
        assert (await c.get("/admin/serving", headers=bad)).status_code == 403
        good = {"Authorization": f"Bearer {token}"}
        assert (await c.get("/admin/serving", headers=good)).status_code == 200
    async with _client(open_app) as c:
        for body, why in [
            ({"batcher": "embed", "window_cap_s": 2.0}, "below max_queue_wait"),
            ({"batcher": "nope", "window_cap_s": 0.001}, "no batcher named"),
            ({"batcher": "embed", "window_cap_s": "0"}, "is a number"),
            ({"batcher": "embed", "colour": 1}, "unknown field"),
            ({"batcher": "embed"}, "nothing to change"),
            ([1, 2], "JSON object"),
        ]:
            r = await c.post("/admin/serving", json=body)
            assert r.status_code == 400 and why in r.json()["error"], (body, r.text)
    assert adaptive.window_cap == 0.01  # nothing changed
    with pytest.raises(ValueError, match="16 characters"):
        ServingControls(token="short")
