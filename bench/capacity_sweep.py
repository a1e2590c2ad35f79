"""The open-loop sweep generator's own overhead (`infersight capacity sweep`).

A server in a separate process answers `GET /ok` after 5 ms (asyncio.sleep: it never
saturates at these rates); this process runs only the generator. At each offered rate the
generator runs one 3 s step and reports how late its sends left against their schedule (the
lag that would otherwise be charged to the server), the rate it actually achieved, and its
CPU time per request (the process's, so httpx's client work is included).

Run: `.venv/bin/python -m bench.capacity_sweep` (about 30 s).
"""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import time

import httpx

from bench.report import usage, write_section
from infersight.capacity import DEFAULT_CONFIG
from infersight.capacity.sweep import run_step
from infersight.capacity.targets import Target

RATES = (50, 100, 200, 400, 800)
STEP_S = 3.0
SERVER_DELAY_S = 0.005


def _serve(port: int) -> None:
    import uvicorn
    from starlette.applications import Starlette
    from starlette.responses import PlainTextResponse
    from starlette.routing import Route

    async def ok(_request: object) -> PlainTextResponse:
        await asyncio.sleep(SERVER_DELAY_S)
        return PlainTextResponse("ok")

    app = Starlette(routes=[Route("/ok", ok)])
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _ms(v: float | None) -> str:
    return "—" if v is None else f"{v * 1000:.2f}"


async def _measure(url: str) -> list[str]:
    cfg = DEFAULT_CONFIG.model_copy(update={"step_seconds": STEP_S, "warmup_seconds": 0.5})
    target = Target(url, "get")
    rows = []
    limits = httpx.Limits(max_connections=cfg.max_outstanding, max_keepalive_connections=256)
    async with httpx.AsyncClient(limits=limits, timeout=cfg.request_timeout) as client:
        await client.get(url)  # a connection up before the first step
        for rate in RATES:
            cpu0, wall0 = time.process_time(), time.perf_counter()
            log = await run_step(client, target, 1, float(rate), float(rate), cfg)
            cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
            d = log.to_dict()
            lags = sorted(log.lags)
            achieved = log.sent / STEP_S
            rows.append(
                f"| {rate} | {achieved:.0f} | {log.ok} | {log.failed} | {_ms(d['lag_p50_s'])} | "
                f"{_ms(d['lag_p99_s'])} | {_ms(lags[-1] if lags else None)} | "
                f"{cpu / max(log.sent, 1) * 1e6:.0f} | {cpu / wall:.0%} |"
            )
    return rows


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "--serve":
        _serve(int(sys.argv[2]))
        return
    usage(__doc__)
    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-m", "bench.capacity_sweep", "--serve", str(port)])
    try:
        url = f"http://127.0.0.1:{port}/ok"
        deadline = time.monotonic() + 20
        while True:
            try:
                httpx.get(url, timeout=1.0)
                break
            except httpx.HTTPError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise SystemExit("the bench server did not start") from None
                time.sleep(0.1)
        rows = asyncio.run(_measure(url))
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    body = (
        f"One {STEP_S:g} s open-loop step per offered rate against a server in another process "
        f"that answers after {SERVER_DELAY_S * 1000:g} ms. Send lag: how late a request left "
        "against its schedule (its latency counts from the schedule, so lag is never hidden, "
        "only added). CPU: this process's CPU time per request sent, and its share of one core "
        "over the step.\n\n"
        "| offered req/s | sent req/s | ok | failed | lag p50 ms | lag p99 ms | lag max ms | "
        "CPU µs/request | CPU share |\n|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n"
        + "\n".join(rows)
        + "\n\nRead: the generator's lag should stay a small fraction of the latencies it "
        "measures; where its CPU share nears one core, the generator, not the server, sets the "
        "pace (split the sweep across processes or machines)."
    )
    write_section(
        "capacity_sweep",
        "Capacity sweep: the open-loop generator's own overhead",
        ".venv/bin/python -m bench.capacity_sweep",
        body,
    )
    print(body)


if __name__ == "__main__":
    main()
