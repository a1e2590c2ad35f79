"""Shared fixtures: real Prometheus-compatible servers started on free loopback ports."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack
from pathlib import Path

import pytest

from infersight.lab.live.servers import LocalPrometheus, LocalVictoriaMetrics
from servers import require


@pytest.fixture
def prometheus_with_backfill() -> Iterator[Callable[[Sequence[Path]], LocalPrometheus]]:
    """Factory: a started LocalPrometheus holding these OpenMetrics files (stopped after)."""
    require("prometheus")
    require("promtool")
    with ExitStack() as stack:

        def start(files: Sequence[Path], **kwargs: object) -> LocalPrometheus:
            return stack.enter_context(LocalPrometheus(backfill=files, **kwargs))  # type: ignore[arg-type]

        yield start


@pytest.fixture(params=["prometheus", "victoria-metrics"])
def store_with_backfill(
    request: pytest.FixtureRequest,
) -> Iterator[Callable[..., LocalPrometheus | LocalVictoriaMetrics]]:
    """Factory over both stores: `start(files, scrape_targets=...)` → a started server."""
    kind: str = request.param
    require(kind)
    if kind == "prometheus":
        require("promtool")
    cls: type[LocalPrometheus] | type[LocalVictoriaMetrics]
    cls = LocalPrometheus if kind == "prometheus" else LocalVictoriaMetrics
    with ExitStack() as stack:

        def start(
            files: Sequence[Path] = (), **kwargs: object
        ) -> LocalPrometheus | LocalVictoriaMetrics:
            server = cls(backfill=files, **kwargs)  # type: ignore[arg-type]
            stack.enter_context(server)
            return server

        yield start
