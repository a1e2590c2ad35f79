"""What conditions are evaluated against: the incident frame, detection's findings, the onset.

`Context` indexes detection's anomalies by (signal, instance) and splits the window at the
incident's onset, so "above 80 °C" and "an Xid appeared" are read since the incident began and
"normal" is read against the time before it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache

import numpy as np
import numpy.typing as npt

from infersight.detect import Anomaly, DetectionResult
from infersight.detect.absence import TARGET_UP
from infersight.detect.fleet import default_peer_groups
from infersight.diagnose.config import DiagnoseConfig
from infersight.exporters import load_catalog
from infersight.frame import FloatArray, MetricFrame
from infersight.signals import all_signals

BoolArray = npt.NDArray[np.bool_]

_COUNTER_FUNCS = re.compile(r"\b(rate|irate|increase|resets|changes)\(")


@cache
def counter_derived() -> frozenset[str]:
    """Signals that some built-in exporter mapping computes from counters."""
    out = set()
    for fam in load_catalog().families.values():
        for signal, alts in fam.mappings.items():
            if any(_COUNTER_FUNCS.search(m.template) for m in alts):
                out.add(signal)
    return frozenset(out)


def _onset(
    det: DetectionResult, frame: MetricFrame, user_facing: Iterable[str], cfg: DiagnoseConfig
) -> float:
    """Onset of the incident: the earliest user-facing anomaly strong enough to be one, else
    the earliest user-facing one, else the earliest one."""
    uf = set(user_facing)
    strong = [a for a in det.anomalies if not a.weak and a.kind != "trend"]
    felt = [a for a in strong if a.signal in uf]
    pick = [a.onset for a in felt if a.score >= cfg.symptom_min_score]
    pick = pick or [a.onset for a in felt] or [a.onset for a in strong]
    if pick:
        return float(min(pick))
    return frame.start + (1.0 - cfg.tail_share) * (frame.end - frame.start)


@dataclass
class Context:
    frame: MetricFrame
    det: DetectionResult
    onset: float
    by_key: dict[tuple[str, str], list[Anomaly]] = field(default_factory=dict)
    _rows: dict[tuple[str, str], FloatArray | None] = field(default_factory=dict)
    #: derived per-instance figures computed once per window (e.g. the card's capacity fit)
    memo: dict[tuple[str, ...], object] = field(default_factory=dict)
    #: the engine's constants for this diagnosis
    config: DiagnoseConfig = field(default_factory=DiagnoseConfig)
    #: the baseline windows ("baseline-1h", "baseline-1d", …) the detection compared with
    baselines: Mapping[str, MetricFrame] = field(default_factory=dict)

    @classmethod
    def build(
        cls,
        frame: MetricFrame,
        det: DetectionResult,
        user_facing: Iterable[str],
        config: DiagnoseConfig | None = None,
        baselines: Mapping[str, MetricFrame] | None = None,
    ) -> Context:
        cfg = config or DiagnoseConfig()
        by: dict[tuple[str, str], list[Anomaly]] = {}
        for a in det.anomalies:
            by.setdefault((a.signal, a.instance), []).append(a)
        onset = _onset(det, frame, user_facing, cfg)
        return cls(frame, det, onset, by, config=cfg, baselines=dict(baselines or {}))

    # -- data ---------------------------------------------------------------------------------
    def instances_of(self, signal: str) -> tuple[str, ...]:
        s = self.frame.get(signal)
        if s is None:
            return ()
        ok = ~np.all(np.isnan(s.values), axis=1)
        has_anomaly = self._anomalous_instances().get(signal, frozenset())
        return tuple(i for k, i in enumerate(s.instances) if ok[k] or i in has_anomaly)

    def _anomalous_instances(self) -> dict[str, frozenset[str]]:
        """Per signal, the instances detection found something on (built once)."""
        key = ("anomalous_instances",)
        if key not in self.memo:
            by: dict[str, set[str]] = {}
            for sig, inst in self.by_key:
                by.setdefault(sig, set()).add(inst)
            self.memo[key] = {sig: frozenset(v) for sig, v in by.items()}
        out = self.memo[key]
        assert isinstance(out, dict)
        return out

    def suspicion(self) -> dict[str, float]:
        """Per instance, the strongest anomaly detection found on it (built once): the
        instance a reading is taken from first, so that a cause is ruled out on the one in
        question, never on whichever a label sorted first."""
        key = ("suspicion",)
        if key not in self.memo:
            worst: dict[str, float] = {}
            for (_, inst), found in self.by_key.items():
                top = max((a.score for a in found if not a.weak), default=0.0)
                worst[inst] = max(worst.get(inst, 0.0), top)
            self.memo[key] = worst
        out = self.memo[key]
        assert isinstance(out, dict)
        return out

    def role(self, instance: str) -> str:
        """The instance's peer group, as detection forms it for fleet outliers (instances
        exposing the same set of service and inference signals): an embedding batcher in the
        API is no peer of the model replicas, though both report a pass's time."""
        key = ("roles",)
        if key not in self.memo:
            self.memo[key] = default_peer_groups(self.frame)
        roles = self.memo[key]
        assert isinstance(roles, dict)
        return str(roles.get(instance, ""))

    def row(self, signal: str, instance: str) -> FloatArray | None:
        key = (signal, instance)
        if key not in self._rows:
            s = self.frame.get(signal)
            k = None if s is None else self._positions(signal).get(instance)
            self._rows[key] = None if s is None or k is None else s.values[k]
        return self._rows[key]

    def _positions(self, signal: str) -> dict[str, int]:
        """Instance → row index of the signal (built once: `SignalSeries.row` scans the
        instances, which read for every instance would grow with the square of the fleet)."""
        key = ("positions", signal)
        if key not in self.memo:
            s = self.frame.get(signal)
            self.memo[key] = {} if s is None else {i: k for k, i in enumerate(s.instances)}
        out = self.memo[key]
        assert isinstance(out, dict)
        return out

    def settled_row(self, signal: str, instance: str) -> FloatArray | None:
        """The signal's row, and for a signal computed from counters with the samples from a
        down `up` until `config.settle_s` after it blanked (NaN): what a peak or a dip is read
        from."""
        row = self.row(signal, instance)
        if row is None or signal not in counter_derived():
            return row
        key = ("settled", signal, instance)
        if key not in self.memo:
            blank = self._after_down(instance)
            self.memo[key] = row if blank is None else np.where(blank, np.nan, row)
        out = self.memo[key]
        assert isinstance(out, np.ndarray)
        return out

    def _after_down(self, instance: str) -> BoolArray | None:
        key = ("after_down", instance)
        if key not in self.memo:
            up = self.row(TARGET_UP, instance)
            blank: BoolArray | None = None
            if up is not None and np.any(up < 0.5):
                reach = int(np.ceil(self.config.settle_s / self.frame.step))
                seen = np.concatenate(([0], np.cumsum(up < 0.5)))
                # a down sample within the last `reach` steps (this one included)
                lo = np.maximum(np.arange(up.size) - reach, 0)
                blank = (seen[1:] - seen[lo]) > 0
            self.memo[key] = blank
        out = self.memo[key]
        assert out is None or isinstance(out, np.ndarray)
        return out

    def split(self, at: float | None = None) -> int:
        """Grid index where the incident part begins (at `at`, default the incident onset)."""
        key = ("split", str(at))
        if key not in self.memo:
            k = self.frame.index_of(self.onset if at is None else at)
            self.memo[key] = max(1, min(k, self.frame.n - 1))
        out = self.memo[key]
        assert isinstance(out, int)
        return out

    def split_ahead(self, lead_s: float) -> int:
        """Grid index `lead_s` before the onset's split (a cause's readings precede it)."""
        return max(1, self.split() - int(lead_s // self.frame.step))

    def peak_split(self) -> int:
        """Grid index where a peak compared with the earlier peak begins (`peak_lead_s`)."""
        return self.split_ahead(self.config.peak_lead_s)

    def before_after(
        self, signal: str, instance: str, at: float | None = None
    ) -> tuple[float | None, float | None, FloatArray | None]:
        """(median before, median since the split, the values since the split); the medians
        are computed once per signal and split for every instance (conditions read many)."""
        row = self.row(signal, instance)
        if row is None or row.size < 2:
            return None, None, None
        k = self.split(at)
        before, after = self.split_medians(signal, k)[instance]
        return before, after, row[k:]

    def split_medians(self, signal: str, k: int) -> dict[str, tuple[float | None, float | None]]:
        """Medians before and since grid index k of every instance's row, in one pass
        (empty when the window lacks the signal)."""
        key = ("split_medians", signal, str(k))
        if key not in self.memo:
            s = self.frame.get(signal)
            if s is None:
                self.memo[key] = {}
            else:
                pre, post = row_medians(s.values[:, :k]), row_medians(s.values[:, k:])
                self.memo[key] = {
                    inst: (_or_none(pre[i]), _or_none(post[i]))
                    for i, inst in enumerate(s.instances)
                }
        out = self.memo[key]
        assert isinstance(out, dict)
        return out

    def extremes(
        self, signal: str, instance: str, k: int, settled: bool
    ) -> tuple[float, float, float, float]:
        """(highest, lowest) before grid index k and (highest, lowest) from it on, of the
        instance's row (its `settled_row` when `settled`); NaN where that part holds no
        reading. Computed for every instance of the signal at once."""
        key = ("extremes", signal, str(k), str(settled))
        if key not in self.memo:
            s = self.frame.get(signal)
            table: dict[str, tuple[float, float, float, float]] = {}
            if s is not None and s.values.shape[1]:
                rows = s.values
                if settled:
                    rows = np.vstack([self._settled(signal, i) for i in s.instances])
                high_pre, low_pre = _extremes_of(rows[:, :k])
                high_post, low_post = _extremes_of(rows[:, k:])
                table = {
                    i: (
                        float(high_pre[j]),
                        float(low_pre[j]),
                        float(high_post[j]),
                        float(low_post[j]),
                    )
                    for j, i in enumerate(s.instances)
                }
            self.memo[key] = table
        out = self.memo[key]
        assert isinstance(out, dict)
        found: tuple[float, float, float, float] = out.get(instance, (np.nan,) * 4)
        return found

    def _settled(self, signal: str, instance: str) -> FloatArray:
        row = self.settled_row(signal, instance)
        assert row is not None  # the instance is one of the signal's
        return row

    def anomalies(self, signal: str, instance: str, kind: str | None = None) -> list[Anomaly]:
        found = self.by_key.get((signal, instance), [])
        return [a for a in found if kind is None or a.kind == kind]

    def stopped(self, signal: str, instance: str) -> bool:
        """The series had readings before the onset and has none since: whatever it said
        before is no reading of now."""
        before, after = self.split_medians(signal, self.split()).get(instance, (None, None))
        return before is not None and after is None

    def absent(self, signal: str, instance: str) -> Anomaly | None:
        found = self.anomalies(signal, instance, "absent") or self.anomalies(
            TARGET_UP, instance, "absent"
        )
        return found[0] if found else None

    def unit(self, signal: str) -> str:
        s = all_signals().get(signal)
        return s.unit if s is not None else ""

    def bad(self, signal: str) -> str:
        s = all_signals().get(signal)
        return s.bad if s is not None else "both"


def row_medians(block: FloatArray) -> FloatArray:
    """The median of each row's numbers (NaN where a row has none): np.median of the row
    without its NaNs, for all rows at once (sorting puts the NaNs last)."""
    if block.shape[1] == 0:
        return np.full(block.shape[0], np.nan)
    ordered = np.sort(block, axis=1)
    count = np.sum(~np.isnan(block), axis=1)
    lo = np.maximum((count - 1) // 2, 0)[:, None]
    hi = np.maximum(count // 2, 0)[:, None]
    mid = (np.take_along_axis(ordered, lo, 1) + np.take_along_axis(ordered, hi, 1)) / 2.0
    out: FloatArray = np.where(count > 0, mid[:, 0], np.nan)
    return out


def _extremes_of(block: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Each row's highest and lowest number (NaN where a row has none), without warnings."""
    if block.shape[1] == 0:
        empty = np.full(block.shape[0], np.nan)
        return empty, empty
    gap = np.isnan(block)
    seen = ~np.all(gap, axis=1)
    high = np.where(seen, np.max(np.where(gap, -np.inf, block), axis=1), np.nan)
    low = np.where(seen, np.min(np.where(gap, np.inf, block), axis=1), np.nan)
    return high, low


def _or_none(v: float) -> float | None:
    return None if np.isnan(v) else float(v)
