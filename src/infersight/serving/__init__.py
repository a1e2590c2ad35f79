"""Serving remedies a service imports: adaptive batching (seed §3.1), admission control with
fail-fast 503s (§3.3; built into the batchers, or standalone) and singleflight caching against
stampedes (§4.1), each instrumented with infersight's native metric names
(`infersight.serving.metrics`)."""

from infersight.serving._batcher import Batcher, BatchFn
from infersight.serving.admin import ServingControls, install_serving_admin
from infersight.serving.admission import AdmissionController
from infersight.serving.batching import AdaptiveBatcher, FixedWindowBatcher
from infersight.serving.cache import LoadingCache
from infersight.serving.errors import (
    BatcherClosed,
    BatchFailed,
    BatchSizeMismatch,
    BatchTimeout,
    LoadCancelled,
    Overloaded,
    OverloadReason,
)
from infersight.serving.http import (
    OverloadedMiddleware,
    install_overload_handler,
    overload_response,
    overloaded_handler,
)
from infersight.serving.metrics import ServingMetrics, serving_metrics
from infersight.serving.singleflight import SingleFlight, ThreadSingleFlight
from infersight.serving.virtual_time import VirtualTimeLoop, run_virtual
from infersight.serving.wait_estimate import predict_wait

__all__ = [
    "AdaptiveBatcher",
    "AdmissionController",
    "BatchFailed",
    "BatchFn",
    "BatchSizeMismatch",
    "BatchTimeout",
    "Batcher",
    "BatcherClosed",
    "FixedWindowBatcher",
    "LoadCancelled",
    "LoadingCache",
    "OverloadReason",
    "Overloaded",
    "OverloadedMiddleware",
    "ServingControls",
    "ServingMetrics",
    "SingleFlight",
    "ThreadSingleFlight",
    "VirtualTimeLoop",
    "install_overload_handler",
    "install_serving_admin",
    "overload_response",
    "overloaded_handler",
    "predict_wait",
    "run_virtual",
    "serving_metrics",
]
