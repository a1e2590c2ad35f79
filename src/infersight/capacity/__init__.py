"""Capacity settings from evidence (seed §3.1–§3.3): the max batch size from a load test's
knee, the worker pool, queue bound and maximum wait from the GPU's concurrency (V/M), and the
VRAM headroom from history. The arithmetic lives here once; `diagnose` quotes it."""

from infersight.capacity.concurrency import Figure, PoolPlan, plan_pool
from infersight.capacity.config import DEFAULT_CONFIG, CapacityConfig
from infersight.capacity.knee import Knee, find_knee
from infersight.capacity.recommend import BatchAdvice, advise, max_batch_for
from infersight.capacity.results import Point, ResultsError, Sweep

__all__ = [
    "DEFAULT_CONFIG",
    "BatchAdvice",
    "CapacityConfig",
    "Figure",
    "Knee",
    "Point",
    "PoolPlan",
    "ResultsError",
    "Sweep",
    "advise",
    "find_knee",
    "max_batch_for",
    "plan_pool",
]
