"""Coverage: how much of each layer the data could actually be read for, and whether that is
enough to judge at all.

Missing is never healthy: an empty server, a server whose every query failed, or a bundle of
NaN holds no reading, so "nothing is wrong" would be a guess. `assess` counts, per layer, the
catalog's signals with at least one finite reading in the incident window (and the instances
they came from), the window's points and the references its readings can be compared with;
`apply` marks a diagnosis not judged when there was nothing to read, and an all-clear not judged
when it has no grounds (`grounds.py`: one time point, no hypothesis decided, no baseline).
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from infersight import grounds
from infersight.detect.config import DEFAULT_USER_FACING
from infersight.diagnose.result import Diagnosis, LayerCoverage
from infersight.frame import MetricFrame
from infersight.signals import Layer, all_signals
from infersight.sources.local import ONLY_NAN
from infersight.windows import INCIDENT


@dataclass(frozen=True)
class Coverage:
    layers: tuple[LayerCoverage, ...]
    reason: str = ""  # why nothing can be judged; "" when something can
    points: int = 0  # time points of the incident window (up to the moment of interest)
    span_s: float = 0.0  # the incident window's length
    #: what its readings can be compared with from outside: baseline windows, `self-1h` …
    references: tuple[str, ...] = ()
    #: why the window itself cannot ground an all-clear (`grounds.window_doubts`)
    doubts: tuple[str, ...] = ()

    @property
    def judged(self) -> bool:
        return not self.reason

    @property
    def readable(self) -> int:
        return sum(len(c.readable) for c in self.layers)

    @property
    def total(self) -> int:
        return sum(c.signals for c in self.layers)

    @property
    def partial(self) -> bool:
        return self.readable < self.total

    def to_dict(self) -> dict[str, object]:
        return {
            "judged": self.judged,
            "reason": self.reason,
            "points": self.points,
            "references": list(self.references),
            "layers": [dataclasses.asdict(c) for c in self.layers],
        }


def _finite_rows(frame: MetricFrame, at: float | None) -> dict[str, tuple[str, ...]]:
    """Per signal, the instances with at least one finite reading (up to `at` when given)."""
    upto = grounds.points_upto(frame, at)
    out: dict[str, tuple[str, ...]] = {}
    for name, s in frame.series.items():
        ok = np.asarray(np.isfinite(s.values[:, :upto]).any(axis=1), dtype=bool)
        insts = tuple(i for k, i in enumerate(s.instances) if ok[k])
        if insts:
            out[name] = insts
    return out


def _why_nothing(frame: MetricFrame | None, missing: Mapping[str, str]) -> str:
    if frame is None:
        return "there is no incident window to read"
    if frame.n == 0:
        return "the incident window has no time points"
    if frame.series:
        rows = sum(len(s.instances) for s in frame.series.values())
        return (
            f"every series holds only NaN or no value ({len(frame.series)} signals, {rows} "
            "series): no reading in the incident window"
        )
    if not missing:
        return "the source holds no series at all for the incident window"
    return _why_missing(missing)


#: phrases of a signal not even asked for (sources/plan.py): no exporter provides it, or its
#: family is there without the metric ("vllm present but vllm:x missing")
_NOT_ASKED = ("no exporter found", "no exporter family")
#: phrase of a signal asked for that came back empty (sources/pull.py, sources/local.py)
_NO_DATA = "no data in the window"


def _not_asked(reason: str) -> bool:
    return any(p in reason for p in _NOT_ASKED) or (
        " present but " in reason and reason.endswith(" missing")
    )


def _why_missing(missing: Mapping[str, str]) -> str:
    """Why no signal has a reading, from the reasons each is missing: nothing to ask for (no
    known exporter's metrics), every sample NaN, every query failed, or every query came back
    empty."""
    asked = {s: r for s, r in missing.items() if not _not_asked(r)}
    if not asked:
        return (
            f"the source holds no metric of a known exporter, so none of the {len(missing)} "
            "signals can be computed (see `infersight exporters`, or add --mappings)"
        )
    nan = sorted(r.removeprefix(ONLY_NAN) for r in asked.values() if r.startswith(ONLY_NAN))
    if len(nan) == len(asked):
        return (
            f"every sample of the known exporters' metrics is NaN ({len(asked)} signals; "
            f"e.g. {nan[0]}), so none holds a reading"
        )
    failed = [r for r in asked.values() if _NO_DATA not in r and not r.startswith(ONLY_NAN)]
    if not failed:
        return f"every query came back empty in the incident window ({len(asked)} signals asked)"
    reason, _ = Counter(failed).most_common(1)[0]
    every = "every query failed" if len(failed) == len(asked) else "no query returned data"
    return f"{every} ({len(failed)} of {len(asked)} signals asked failed), e.g. {reason}"


def assess(
    windows: Mapping[str, MetricFrame],
    missing: Mapping[str, str] | None = None,
    at: float | None = None,
) -> Coverage:
    """Per layer, which catalog signals had finite readings in the incident window; the reason
    nothing can be judged when none had any. `missing`: signal → why it has no data (from the
    pull or the bundle), quoted in that reason."""
    frame = windows.get(INCIDENT)
    readable = _finite_rows(frame, at) if frame is not None else {}
    known = all_signals()
    layers = []
    for layer in Layer:
        names = [n for n, sig in known.items() if sig.layer is layer]
        here = [n for n in names if n in readable]
        insts = sorted({i for n in here for i in readable[n]})
        layers.append(LayerCoverage(layer.value, len(names), tuple(here), tuple(insts)))
    reason = "" if readable else _why_nothing(frame, missing or {})
    if frame is None:
        return Coverage(tuple(layers), reason)
    points = grounds.points_upto(frame, at)
    span = max(points - 1, 0) * frame.step
    refs = grounds.references(windows, at) if readable else ()
    doubts = grounds.window_doubts(frame, at, DEFAULT_USER_FACING) if readable else ()
    return Coverage(tuple(layers), reason, points, span, refs, doubts)


def unjudged(
    windows: Mapping[str, MetricFrame],
    coverage: Coverage,
    missing: Mapping[str, str] | None = None,
    source: Mapping[str, str] | None = None,
) -> Diagnosis:
    """The diagnosis of data with nothing to read, made without running the engine on it: not
    judged, not healthy, the reason as its summary, the coverage and what was missing."""
    frame = windows.get(INCIDENT)
    start, end, step = (frame.start, frame.end, frame.step) if frame else (0.0, 0.0, 1.0)
    return Diagnosis(
        start=start,
        end=end,
        step=step,
        healthy=False,
        summary=f"Cannot judge: {coverage.reason}.",
        scope={},
        missing_signals=dict(missing or {}),
        source=dict(source or {}),
        judged=False,
        coverage=coverage.layers,
    )


def unclear(diagnosis: Diagnosis, coverage: Coverage) -> str:
    """Why the diagnosis's all-clear has no grounds ("" when it has, or it is no all-clear)."""
    if not diagnosis.healthy:
        return ""
    decided = sum(1 for h in diagnosis.hypotheses if h.verdict != "inconclusive")
    undecided = len(diagnosis.hypotheses) - decided
    return grounds.why_not_clear(
        coverage.points, coverage.references, coverage.span_s, decided, undecided, coverage.doubts
    )


def apply(diagnosis: Diagnosis, coverage: Coverage) -> Diagnosis:
    """The diagnosis with its coverage. Not judged (and not healthy, saying why) when nothing
    could be read, or when it is an all-clear without grounds; one already not judged stays so."""
    reason = coverage.reason or unclear(diagnosis, coverage)
    if not reason or not diagnosis.judged:  # not judged: an earlier apply said why; it stands
        return dataclasses.replace(diagnosis, coverage=coverage.layers)
    return dataclasses.replace(
        diagnosis,
        judged=False,
        healthy=False,
        coverage=coverage.layers,
        summary=f"Cannot judge: {reason}.",
    )
