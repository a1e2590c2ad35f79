"""Exceptions raised by the serving remedies; callers catch these by type."""

from __future__ import annotations

import math
from typing import Literal

OverloadReason = Literal["queue_full", "wait_exceeded"]


class BatcherClosed(RuntimeError):
    """The batcher was closed: no new submissions, and (without drain) pending ones fail."""


class BatchTimeout(RuntimeError):
    """The batch ran past `batch_timeout`: it was cancelled and its callers get this."""


class BatchFailed(RuntimeError):
    """batch_fn ended in a way no caller should receive as is (it raised CancelledError while
    nobody cancelled it, or a BaseException that is not an Exception); `__cause__` holds it."""


class BatchSizeMismatch(RuntimeError):
    """batch_fn returned a result list whose length differs from the batch it was given."""

    def __init__(self, expected: int, got: int) -> None:
        super().__init__(f"batch_fn returned {got} results for a batch of {expected} items")
        self.expected = expected
        self.got = got


class LoadCancelled(RuntimeError):
    """A shared load was cancelled from outside while other callers were still waiting on it."""


class Overloaded(Exception):
    """Admission refused: the queue is full or the wait would exceed the maximum (seed §3.3).

    `retry_after` is the controller's estimate, in seconds, of when the queue will have drained;
    `retry_after_header` is the same rounded up to whole seconds, at least 1, for `Retry-After`.
    """

    def __init__(self, reason: OverloadReason, retry_after: float) -> None:
        super().__init__(f"overloaded ({reason}); retry after {retry_after:.3f}s")
        self.reason: OverloadReason = reason
        self.retry_after = retry_after

    @property
    def retry_after_header(self) -> str:
        return str(max(1, math.ceil(self.retry_after)))
