"""PromQL checks against a real Prometheus-compatible server.

A check holds as an alerting rule fires: when its instant query returns at least one series
(NaN values aside). Write it as a filter, `x > 0.5` or `x == 7` (empty when false), never with
`bool` (which returns 0 rather than nothing), nor as a bare scalar (which always answers). An
empty answer is "does not hold", and an unreachable server is "cannot tell": never held.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any, Literal

from infersight.sources.errors import SourceError
from infersight.sources.prometheus import PrometheusClient

Verdict = Literal["holds", "fails", "unknown"]


@dataclass(frozen=True)
class CheckResult:
    name: str
    promql: str
    verdict: Verdict
    detail: str  # the values seen, or why none could be read
    evaluated_at: float

    @property
    def holds(self) -> bool:
        return self.verdict == "holds"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _labels(labels: dict[str, str]) -> str:
    inner = ",".join(f'{k}="{v}"' for k, v in sorted(labels.items()) if k != "__name__")
    return "{" + inner + "}"


class Checker:
    """Evaluates checks on one server; `None` url: every check is `unknown`."""

    def __init__(self, url: str | None, timeout: float, **client_kwargs: Any) -> None:
        self.url = url
        self._client = (
            PrometheusClient(url, timeout=timeout, retries=1, **client_kwargs) if url else None
        )

    def evaluate(self, name: str, promql: str) -> CheckResult:
        now = time.time()
        if self._client is None:
            return CheckResult(name, promql, "unknown", "no Prometheus given (--prometheus)", now)
        try:
            series = self._client.query(promql, now)
        except SourceError as exc:
            return CheckResult(name, promql, "unknown", f"cannot evaluate: {exc}", now)
        if not series:
            return CheckResult(name, promql, "fails", "no series (empty answer)", now)
        seen = []
        for s in series[:10]:
            value = float(s.values[-1]) if len(s.values) else math.nan
            seen.append(f"{_labels(s.labels)} {value:g}")
        values = [float(s.values[-1]) if len(s.values) else math.nan for s in series]
        good = not any(math.isnan(v) for v in values)
        more = f" (+{len(series) - 10} more)" if len(series) > 10 else ""
        return CheckResult(name, promql, "holds" if good else "fails", "; ".join(seen) + more, now)

    def wait_for(
        self,
        name: str,
        promql: str,
        within: float,
        every: float,
        on_try: Callable[[CheckResult], None] = lambda _r: None,
    ) -> tuple[CheckResult, int]:
        """Evaluate until it holds or `within` seconds pass; the last result and the tries."""
        deadline = time.monotonic() + within
        tries = 0
        while True:
            result = self.evaluate(name, promql)
            tries += 1
            on_try(result)
            if result.holds:
                return result, tries
            left = deadline - time.monotonic()
            if left <= 0:
                return result, tries
            time.sleep(min(every, left))
