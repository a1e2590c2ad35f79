"""Checks: PromQL against a real Prometheus-compatible server, or a `kubectl get`.

A PromQL check holds as an alerting rule fires: when its instant query returns at least one
series (NaN values aside). Write it as a filter, `x > 0.5` or `x == 7` (empty when false),
never with `bool` (which returns 0 rather than nothing), nor as a bare scalar (which always
answers). An empty answer is "does not hold", and an unreachable server is "cannot tell":
never held. A `kubectl get` holds when kubectl answers (exit 0) with the text expected: no
kubectl on this machine, or no cluster it can reach, and it fails, saying which.
"""

from __future__ import annotations

import math
import shutil
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any, Literal

from infersight.runbooks.model import Step
from infersight.sources.errors import SourceError
from infersight.sources.prometheus import PrometheusClient

Verdict = Literal["holds", "fails", "unknown"]


@dataclass(frozen=True)
class CheckResult:
    name: str
    promql: str  # "" for a command's check
    verdict: Verdict
    detail: str  # the values seen, or why none could be read
    evaluated_at: float
    command: str = ""  # the command line of a `kubectl get` check

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


def kubectl_check(
    name: str, step: Step, expect: str | None, timeout: float, max_output: int, drain: float
) -> CheckResult:
    """A `kubectl get` (a rendered step) as a check: it must answer, with `expect` in it."""
    from infersight.runbooks.actions import run_step

    now, command = time.time(), step.describe()
    if shutil.which("kubectl") is None:
        why = "kubectl is not installed here (not on PATH): no cluster can be asked"
        return CheckResult(name, "", "fails", why, now, command)
    res = run_step(step, timeout, max_output, drain)
    if not res.ok:
        said = [ln.strip() for ln in res.error_output.splitlines() if ln.strip()]
        why = said[-1] if said else res.detail  # kubectl's last line says what went wrong
        return CheckResult(name, "", "fails", f"kubectl: {why}", now, command)
    answer = " ".join(res.output.split())
    if expect is not None and expect not in res.output:
        why = f"kubectl answered {answer[:200]!r}, wanted {expect!r} in it"
        return CheckResult(name, "", "fails", why, now, command)
    if expect is None and not answer:
        return CheckResult(name, "", "fails", "kubectl answered nothing", now, command)
    return CheckResult(name, "", "holds", f"kubectl answered {answer[:200]!r}", now, command)
