"""How long a queued request will wait before its batch is dispatched.

The requests ahead of it leave in full batches, so the wait is the time until an executor
frees up plus whole batch times; the batch time is learnt from recent full batches with a
margin, as TCP sizes its retransmit timer, so that few admitted requests wait longer than
predicted.
"""

from __future__ import annotations

from collections.abc import Sequence

BATCH_TIME_ALPHA = 0.2  # EWMA weight of the newest batch duration in the wait prediction
BATCH_TIME_DEVIATIONS = 4.0  # predicted batch time = mean + this × mean deviation (as TCP's RTO)


class Ewma:
    """Exponentially weighted mean and mean absolute deviation of a duration."""

    __slots__ = ("dev", "mean")

    def __init__(self) -> None:
        self.mean: float | None = None
        self.dev = 0.0

    def add(self, x: float) -> None:
        if self.mean is None:
            self.mean = x
            return
        a = BATCH_TIME_ALPHA
        self.dev += a * (abs(x - self.mean) - self.dev)
        self.mean += a * (x - self.mean)

    def high(self) -> float | None:
        """A batch time that few batches exceed: mean + BATCH_TIME_DEVIATIONS × deviation."""
        return None if self.mean is None else self.mean + BATCH_TIME_DEVIATIONS * self.dev


def predict_wait(
    position: int,
    *,
    max_batch_size: int,
    batch_time: float | None,
    busy_remaining: Sequence[float],
    max_concurrency: int,
) -> float | None:
    """Seconds until the request at 1-based POSITION in the pending queue is dispatched.

    The requests ahead of it leave in full batches, so it goes in batch number
    `(position - 1) // max_batch_size` (0 = the next one). With `max_concurrency` executors
    whose running batches end in BUSY_REMAINING seconds (idle ones: 0), each batch taking
    BATCH_TIME, batch b starts when executor `b % c` (in order of freeing) has run `b // c` more
    batches. None when that needs BATCH_TIME and none is known yet.
    """
    b = (position - 1) // max_batch_size
    free = sorted(busy_remaining)
    free = [0.0] * (max_concurrency - len(free)) + free
    rounds, slot = divmod(b, max_concurrency)
    if rounds == 0 and free[slot] == 0.0:
        return 0.0
    if batch_time is None:
        return None
    return free[slot] + rounds * batch_time
