"""Fuzzing registers whatever it draws as a credential (`serve` learns its token from the
config): `65536` or `1e400` as a bearer token. The process-wide registry is put back after
each test here, so later tests in the same process do not see their figures masked."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from infersight import redact


@pytest.fixture(autouse=True)
def _registry_restored() -> Iterator[None]:
    registry = redact._REGISTRY
    forms, ordered = set(registry._forms), registry.ordered
    yield
    with registry._lock:
        registry._forms, registry.ordered = forms, ordered
