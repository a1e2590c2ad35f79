"""Locust as a library, headless, in a process of its own (Locust patches the standard library
with gevent on import; the infersight process stays unpatched).

    python -m infersight.stress.locust_main SPEC.json OUT.json

SPEC: {"url", "path", "steps": [{"name", "seconds", "users"}], "max_seconds"}. OUT: per step,
every request's latency (s) and whether it failed. Load goes to loopback only and stops at
the end of the last step, or at `max_seconds` whatever happens.
"""

from __future__ import annotations

import json
import random
import sys
import time
from pathlib import Path
from typing import Any


def main() -> None:
    spec: dict[str, Any] = json.loads(Path(sys.argv[1]).read_text())
    out_path = Path(sys.argv[2])

    import gevent  # type: ignore[import-untyped]
    from locust import HttpUser, LoadTestShape, constant_throughput, events, task
    from locust.env import Environment

    steps = spec["steps"]
    ends = []
    t = 0.0
    for s in steps:
        t += float(s["seconds"])
        ends.append(t)
    path = spec["path"]
    per_step: list[dict[str, list[float]]] = [{"ok": [], "failed": []} for _ in steps]
    started = time.monotonic()
    rng = random.Random()

    def step_index(now: float) -> int:
        el = now - started
        for i, end in enumerate(ends):
            if el < end:
                return i
        return len(steps) - 1

    class Shape(LoadTestShape):
        def tick(self) -> tuple[int, float] | None:
            el = time.monotonic() - started
            for s, end in zip(steps, ends, strict=True):
                if el < end:
                    users = int(s["users"])
                    return users, float(max(users, 1))  # reach the step's users within ~1 s
            return None

    class Client(HttpUser):
        host = spec["url"]
        wait_time = constant_throughput(1.0)

        @task
        def ask(self) -> None:
            # a fresh question nearly every time: the worst case misses every cache, and
            # one run leaves nothing in the cache that makes the next one look faster
            q = f"stress question {rng.randrange(10**9)}"
            self.client.get(path, params={"q": q}, name=path, timeout=15)

    kinds: list[dict[str, int]] = [{} for _ in steps]

    @events.request.add_listener  # type: ignore[untyped-decorator]
    def on_request(response_time: float, exception: object, **_kw: object) -> None:
        i = step_index(time.monotonic())
        per_step[i]["failed" if exception else "ok"].append(response_time / 1000.0)
        if exception:
            kind = f"{type(exception).__name__}: {exception}"[:120]
            kinds[i][kind] = kinds[i].get(kind, 0) + 1

    env = Environment(user_classes=[Client], shape_class=Shape(), events=events)  # type: ignore[no-untyped-call]
    runner = env.create_local_runner()
    runner.start_shape()
    deadline = started + float(spec["max_seconds"])
    # the shape ends the run after its last step; the deadline bounds it whatever happens
    while time.monotonic() < deadline and time.monotonic() - started < ends[-1] + 1:
        gevent.sleep(0.5)
        if runner.state == "stopped":
            break
    runner.quit()
    for i, k in enumerate(kinds):
        per_step[i]["error_kinds"] = k  # type: ignore[assignment]
    out_path.write_text(json.dumps({"steps": per_step, "seconds": time.monotonic() - started}))


if __name__ == "__main__":
    main()
