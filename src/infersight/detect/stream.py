"""Streaming detection: one series, one point at a time, each point scored on arrival.

Per point, the state is updated in O(1) amortised work (no re-run over the window):

1. **Expected value.** Three predictors, each aligned to the point's own clock time (seed §6.1):
   the recent level (median of the hour before), the same clock time yesterday and the same
   time last week (medians of ±`season_half_width_s` around the lag, read from the series' own
   history). Each predictor keeps a running mean absolute error over `error_points`; the one
   with the smallest error is the expected value, and its error is the band's width. A daily
   edge that yesterday also had is predicted by yesterday and costs nothing; a series with no
   season keeps the recent level. The width is learnt from the series, with two floors only for
   flat lines: half its resolution and 0.1% of its level.
2. **Six statistics** per point: a *spike* (this point's |z|); a *level shift*, the mean of
   the last `shift_points` against the mean of the 2× as many before them, in band widths (a
   two-sample test, so a predictor that follows the new level cannot hide it), and a slower one
   over `drift_points`, both on the level clipped at ±3 widths (a spike moves it little) and,
   when yesterday predicts best, on the residual against yesterday (the day removed); a
   *variance change* (the mean of the last `variance_points` clipped z²); and the value itself
   against the series' own range, above and below (a value two weeks have not seen).
3. **Rarity learnt from the series.** Each statistic is judged against its own last
   `tail_points` values on this series (`TailModel`: empirical, then an exponential tail past
   its 98th percentile), so a z of 5 on a bursty series is not the news it is on a calm one.
   The rarest statistic names the kind. **Likelihood** = 1 − its rarity: bounded in [0, 1),
   monotone in the evidence, the same meaning on every series (it does not saturate on a flat
   baseline: a flat line's statistics are judged against a flat line's history).
   `surprise` = −log10(rarity) ranks without float ties near 1.
4. **Report** when surprise ≥ `report_surprise`, once per episode: after a report the series
   must pass `hold_points` points, the last `rearm_points` of them quiet, before it reports
   again. `reported_at` is the point that could first have been reported; `onset` goes back
   over the run of same-signed |z| ≥ 2 before it.

A missing value (NaN) is reported as missing (`PointScore.missing`), never scored as healthy.
"""

from __future__ import annotations

import bisect
import math
from collections import deque
from dataclasses import dataclass
from typing import Literal

from infersight.detect.stream_config import StreamConfig

StreamKind = Literal["spike", "level_shift", "variance_change"]
PREDICTORS = ("recent", "1d", "7d")
_LAGS = {"1d": 86400.0, "7d": 7 * 86400.0}
_MAE_TO_SIGMA = math.sqrt(math.pi / 2.0)  # mean |N(0, σ)| = σ·√(2/π)
_LOG10 = math.log(10.0)


class TailModel:
    """How rare a value of one statistic is *for this series*: its own last `size` values.

    Below their (1 − `tail_share`) quantile the rarity is empirical (the share of values at or
    above it); above, an exponential tail fitted to the excesses over that quantile (peaks over
    threshold) extends it, so the rarity keeps growing with the evidence instead of saturating
    at 1/size. Returned as surprise = −log10 P(≥ value). Cost per point: one insort and one
    removal in a sorted list.
    """

    def __init__(self, size: int, tail_share: float, min_excess: int = 1) -> None:
        self.size = size
        self.share = tail_share
        self.min_excess = min_excess
        self._fifo: deque[float] = deque()
        self._sorted: list[float] = []

    def __len__(self) -> int:
        return len(self._sorted)

    def surprise(self, a: float, min_scale: float) -> float:
        """−log10 P(≥ a); the fitted tail's scale is at least `min_scale` (a flat history has
        none, and a change on a flat line is then rare by its size in band widths)."""
        s = self._sorted
        n = len(s)
        if n == 0:
            return 0.0
        k = min(max(int(self.share * n), self.min_excess), n)
        u = s[n - k]
        if a <= u:
            return -math.log10((n - bisect.bisect_left(s, a) + 1) / (n + 1))
        top = s[n - k :]
        beta = max(sum(top) / k - u, min_scale)
        return -math.log10((k + 1) / (n + 1)) + (a - u) / beta / _LOG10

    def add(self, a: float) -> None:
        self._fifo.append(a)
        bisect.insort(self._sorted, a)
        if len(self._fifo) > self.size:
            old = self._fifo.popleft()
            del self._sorted[bisect.bisect_left(self._sorted, old)]


@dataclass(frozen=True)
class StreamFinding:
    """One reported episode: what it is, since when, when it could first be said, how sure."""

    series: str
    kind: StreamKind
    onset: float  # timestamp of the first point of the episode
    reported_at: float  # timestamp of the point that made it reportable
    direction: Literal["up", "down"]
    observed: float
    expected: float
    low: float  # the band at the reported point (expected ± 3 widths)
    high: float
    z: float
    likelihood: float
    surprise: float
    baseline: str  # the predictor that gave the expected value

    def describe(self) -> str:
        return (
            f"{self.series}: {self.kind.replace('_', ' ')} {self.direction}, {self.observed:.4g} "
            f"vs {self.expected:.4g} expected (band {self.low:.4g}..{self.high:.4g}, z "
            f"{self.z:.1f}, likelihood {self.likelihood:.6f}) against {self.baseline}"
        )


@dataclass(frozen=True)
class PointScore:
    """The verdict on one point. `likelihood`/`surprise` are NaN while missing or warming up."""

    t: float
    value: float
    expected: float
    width: float
    z: float
    likelihood: float
    surprise: float
    kind: StreamKind | None
    missing: bool
    finding: StreamFinding | None = None


class SeriesDetector:
    """The incremental detectors of one series; feed points in time order with `update`."""

    def __init__(self, name: str = "", config: StreamConfig | None = None) -> None:
        self.name = name
        self.cfg = config or StreamConfig()
        c = self.cfg
        self._keep_s = 7 * 86400.0 + c.season_half_width_s + 3600.0
        self._t: list[float] = []
        self._x: list[float] = []
        self._lo = 0  # history starts at self._t[self._lo]
        self._diffs: list[float] = []
        self._step = 0.0
        self._resolution = math.inf
        self._last: float | None = None
        self._recent: deque[float] = deque(maxlen=c.recent_min_points)
        self._mae = {p: 0.0 for p in PREDICTORS}
        self._n_err = {p: 0 for p in PREDICTORS}
        self._alpha = 1.0 / c.error_points
        self._n = {"shift": c.shift_points, "drift": c.drift_points, "variance": c.variance_points}
        self._wins: dict[str, deque[float]] = {"variance": deque(maxlen=c.variance_points)}
        self._sums = {"variance": 0.0}
        # running sums of two level streams, each clipped at ±clip widths of its predictor:
        # the value itself, and its residual against yesterday (the level with the day removed)
        self._cum: dict[str, list[float]] = {"recent": [0.0], "1d": [0.0]}
        self._last_lv = {"recent": 0.0, "1d": 0.0}
        self._preds: dict[str, float] = {}
        self._shift_sign = 0.0
        self._run: deque[tuple[float, float]] = deque(maxlen=max(c.shift_points, 64))
        self._seen = 0
        self._tails = {
            k: TailModel(c.tail_points, c.tail_share, c.tail_min_excess)
            for k in ("spike", "shift", "drift", "variance", "high", "low")
        }
        self._armed = True
        self._quiet = 0

    # -- history ------------------------------------------------------------------------------
    def _remember(self, t: float, x: float) -> None:
        self._t.append(t)
        self._x.append(x)
        if self._t[self._lo] < t - self._keep_s:
            self._lo = bisect.bisect_left(self._t, t - self._keep_s, self._lo)
            if self._lo > 4096 and self._lo > len(self._t) // 2:
                del self._t[: self._lo]
                del self._x[: self._lo]
                self._lo = 0

    def _seasonal(self, t: float, lag: float) -> float | None:
        """Median of the history within ±half width of t − lag; None if none there."""
        h = max(self.cfg.season_half_width_s, 0.5 * self._step)
        a = bisect.bisect_left(self._t, t - lag - h, self._lo)
        if a >= len(self._t) or self._t[a] > t - lag + h:
            return None
        b = bisect.bisect_right(self._t, t - lag + h, a)
        vals = sorted(self._x[a:b])
        m = len(vals)
        return vals[m // 2] if m % 2 else 0.5 * (vals[m // 2 - 1] + vals[m // 2])

    def _set_step(self, t: float) -> None:
        if self._last is not None and len(self._diffs) < 32 and t > self._last:
            self._diffs.append(t - self._last)
            d = sorted(self._diffs)
            self._step = d[len(d) // 2]
            n = round(self.cfg.recent_s / self._step) if self._step > 0 else 0
            n = max(self.cfg.recent_min_points, min(self.cfg.recent_max_points, n))
            if n != self._recent.maxlen:
                self._recent = deque(self._recent, maxlen=n)
        self._last = t

    # -- one point ----------------------------------------------------------------------------
    def update(self, t: float, x: float) -> PointScore:
        """Score the point (t, x) against the state so far, then learn from it.

        Points must come in time order (a point at or before the last one is refused)."""
        if self._last is not None and t <= self._last:
            raise ValueError(f"{self.name}: point at {t} is not after the last one ({self._last})")
        if x != x or math.isinf(x):  # NaN or inf: missing, said so
            self._set_step(t)
            return PointScore(t, x, math.nan, math.nan, math.nan, math.nan, math.nan, None, True)
        c = self.cfg
        if self._t and t - self._t[-1] > c.recent_s:
            self._recent.clear()  # after a gap, the hour before is not there
        self._set_step(t)
        preds: dict[str, float] = {}
        if self._recent:
            r = sorted(self._recent)
            m = len(r)
            preds["recent"] = r[m // 2] if m % 2 else 0.5 * (r[m // 2 - 1] + r[m // 2])
        if self._t and t - self._t[self._lo] >= 86400.0 - c.season_half_width_s:
            for name, lag in _LAGS.items():
                v = self._seasonal(t, lag)
                if v is not None:
                    preds[name] = v
        best = None
        for name in PREDICTORS:
            if name not in preds:
                continue
            ready = self._n_err[name] >= (1 if name == "recent" else c.min_error_points)
            if ready and (best is None or self._mae[name] < self._mae[best]):
                best = name
        expected = preds.get(best or "recent", math.nan)
        width = math.nan
        if best is not None:
            width = max(self._mae[best] * _MAE_TO_SIGMA, self._floor(expected))
        z = (x - expected) / width if best is not None else math.nan
        self._preds = preds
        # learn: each predictor's error, clipped so that an incident widens nothing fast
        for name, v in preds.items():
            err = abs(x - v)
            if self._n_err[name] >= c.min_error_points // 2 and self._mae[name] > 0:
                err = min(err, c.clip_z * self._mae[name] * _MAE_TO_SIGMA)
            n = self._n_err[name]
            a = max(self._alpha, 1.0 / (n + 1))
            self._mae[name] += a * (err - self._mae[name])
            self._n_err[name] = n + 1
        if self._recent:
            step = abs(x - self._recent[-1])
            if 0 < step < self._resolution:
                self._resolution = step
        self._recent.append(x)
        self._remember(t, x)
        self._seen += 1
        if best is None or self._seen <= c.warmup_points:
            return PointScore(t, x, expected, width, z, math.nan, math.nan, None, False)
        return self._test(t, x, expected, width, z, best)

    def _floor(self, level: float) -> float:
        """The least band width: half the series' resolution, 0.1% of its level."""
        c = self.cfg
        res = c.resolution_share * self._resolution if self._resolution < math.inf else 0.0
        return max(res, c.level_share * abs(level), 1e-12)

    def _width(self, name: str) -> float:
        return max(self._mae[name] * _MAE_TO_SIGMA, self._floor(self._preds.get(name, 0.0)))

    def _push_levels(self, x: float) -> None:
        """Append this point to both level streams (clipped around each predictor)."""
        k = self.cfg.shift_clip_z
        keep = 3 * self.cfg.drift_points + 1
        for name, cum in self._cum.items():
            p = self._preds.get(name)
            if p is None:
                lv = self._last_lv[name]
            else:
                w = k * self._width(name)
                r = max(-w, min(w, x - p))
                lv = (p + r) if name == "recent" else r
            self._last_lv[name] = lv
            cum.append(cum[-1] + lv)
            if len(cum) > 4 * keep:
                del cum[: len(cum) - keep]

    def _window(self, name: str, v: float) -> float | None:
        """Push v into the named rolling sum; the sum once the window is full, else None."""
        q = self._wins[name]
        if len(q) == q.maxlen:
            self._sums[name] -= q[0]
        q.append(v)
        self._sums[name] += v
        return self._sums[name] if len(q) == q.maxlen else None

    def _test(
        self, t: float, x: float, expected: float, width: float, z: float, best: str
    ) -> PointScore:
        c = self.cfg
        self._run.append((t, z))
        stats: dict[str, float] = {"spike": abs(z), "high": x, "low": -x}
        # shifts compare the last w points of a level stream with the 2w before them
        stream = "recent" if best == "recent" else "1d"
        self._push_levels(x)
        cum = self._cum[stream]
        sw = self._width(stream)
        for name in ("shift", "drift"):
            w = self._n[name]
            if len(cum) > 3 * w:
                now = (cum[-1] - cum[-1 - w]) / w
                before = (cum[-1 - w] - cum[-1 - 3 * w]) / (2 * w)
                d = (now - before) / (sw * math.sqrt(1.0 / w + 1.0 / (2 * w)))
                stats[name] = abs(d)
                if name == "shift":
                    self._shift_sign = d
        total = self._window("variance", min(z * z, c.variance_clip_z**2))
        if total is not None:
            stats["variance"] = total / self._n["variance"]
        top, surprise = "spike", 0.0
        calibrated = True
        for name, a in stats.items():
            tm = self._tails[name]
            if len(tm) < c.tail_min_points:
                calibrated = False
            floor = c.range_min_scale * width if name in ("high", "low") else c.tail_min_scale_z
            sp = tm.surprise(a, floor)
            tm.add(a)
            if sp > surprise:
                top, surprise = name, sp
        if not calibrated:
            return PointScore(t, x, expected, width, z, math.nan, math.nan, None, False)
        kind = self._kind(top, z)
        likelihood = 1.0 - 10.0 ** (-surprise)
        finding = None
        if surprise >= c.report_surprise and self._armed:
            self._armed = False
            self._quiet = 0
            self._since = 0
            finding = self._finding(t, x, expected, width, z, kind, likelihood, surprise, best)
        elif not self._armed:
            self._since += 1
            self._quiet = self._quiet + 1 if surprise < c.rearm_surprise else 0
            if self._quiet >= c.rearm_points and self._since >= c.hold_points:
                self._armed = True
        return PointScore(t, x, expected, width, z, likelihood, surprise, kind, False, finding)

    def _kind(self, top: str, z: float) -> StreamKind:
        """What the strongest statistic says happened. A value outside the series' own range
        is a spike when only this point is off the band, else a level shift."""
        if top == "variance":
            return "variance_change"
        if top in ("shift", "drift"):
            return "level_shift"
        if top == "spike":
            return "spike"
        prev = self._run[-2][1] if len(self._run) > 1 else 0.0
        return "spike" if abs(prev) < 2.0 else "level_shift"

    def _finding(
        self,
        t: float,
        x: float,
        expected: float,
        width: float,
        z: float,
        kind: StreamKind,
        likelihood: float,
        surprise: float,
        best: str,
    ) -> StreamFinding:
        direction: Literal["up", "down"]
        if kind == "level_shift":
            direction = "up" if self._shift_sign >= 0 else "down"
        else:
            direction = "up" if z >= 0 else "down"
        sign = 1.0 if direction == "up" else -1.0
        onset = t
        for ts, zz in reversed(self._run):
            if zz * sign < 2.0:
                break
            onset = ts
        return StreamFinding(
            series=self.name,
            kind=kind,
            onset=onset,
            reported_at=t,
            direction=direction,
            observed=x,
            expected=expected,
            low=expected - 3.0 * width,
            high=expected + 3.0 * width,
            z=z,
            likelihood=likelihood,
            surprise=surprise,
            baseline={"recent": "baseline-1h", "1d": "baseline-1d", "7d": "baseline-7d"}[best],
        )
