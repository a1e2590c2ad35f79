"""An asyncio event loop on a virtual clock, for deterministic tests of batching and admission.

Time stands still while callbacks run and jumps straight to the next timer when the loop would
otherwise sleep, so `asyncio.sleep(0.02)` in a simulated model takes exactly 0.02 s of loop time
and no wall time, and latencies measured with `loop.time()` are exact. Only timers advance time:
a coroutine that waits on real I/O (sockets, threads) would see the clock jump or the loop
stall, so use it for in-process simulations only.

    run_virtual(main())             # like asyncio.run(main()), on virtual time from 0.0
"""

from __future__ import annotations

import asyncio
import selectors
from collections.abc import Coroutine
from typing import Any, TypeVar

_T = TypeVar("_T")


class _VirtualSelector(selectors.DefaultSelector):
    """Never blocks: a timeout means 'nothing to do until the next timer', so time jumps."""

    def __init__(self, loop_clock: list[float]) -> None:
        super().__init__()
        self._clock = loop_clock

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        if timeout is None:
            raise RuntimeError("virtual-time loop idle with no timer pending: it would hang")
        if timeout > 0:
            self._clock[0] += timeout
        result: list[tuple[selectors.SelectorKey, int]] = super().select(0)
        return result


class VirtualTimeLoop(asyncio.SelectorEventLoop):
    """A selector event loop whose `time()` is virtual (see the module docstring)."""

    def __init__(self, start: float = 0.0) -> None:
        self._virtual_now = [start]
        super().__init__(selector=_VirtualSelector(self._virtual_now))

    def time(self) -> float:
        return self._virtual_now[0]


def run_virtual(main: Coroutine[Any, Any, _T]) -> _T:
    """Run MAIN to completion on a fresh VirtualTimeLoop (virtual clock starting at 0.0)."""
    with asyncio.Runner(loop_factory=VirtualTimeLoop) as runner:
        return runner.run(main)
