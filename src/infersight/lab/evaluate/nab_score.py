"""A scorer for the Numenta Anomaly Benchmark, written from its published rules.

Rules (Lavin & Ahmad 2015, "Evaluating Real-time Anomaly Detection Algorithms", and NAB's
README), as implemented here:

- The first 15% of each file (at most 750 rows) is the *probationary period*: rows there are
  neither rewarded nor penalised, and a window lying wholly inside it is not scored.
- A row is a *detection* when its score is ≥ the threshold; one threshold holds for the whole
  corpus and is the one that maximises the corpus total (found here exhaustively).
- Inside a labelled window, only the first detection counts: it earns
  ``tp_weight · σ(p) / σ(−1)`` where ``σ(p) = 2 / (1 + e^{5p}) − 1`` and
  ``p = −(right − i + 1) / width`` (``i`` the row, ``right`` the window's last row, ``width`` its
  rows), so a detection on the window's first row earns exactly 1 and one at its end ≈ 0. (The
  division by σ(−1) ≈ 0.98661 is NAB's: without it the shipped windowedGaussian rows score
  1.3% to 7.6% less per window than NAB's published per-file figures.)
- A window with no detection costs ``−fn_weight``.
- A detection outside every window costs ``fp_weight · σ(p)`` (σ is negative for p > 0), with
  ``p = |i − right_prev| / (width_prev − 1)`` measured from the previous window's end (a late
  detection just after a window costs little), σ = −1 beyond p = 3, and ``−fp_weight`` when no
  window precedes it.
- The corpus total is normalised as ``100 · (raw − null) / (perfect − null)``: ``null`` is the
  raw total of a detector that never fires (every scored window missed) and ``perfect`` is
  ``tp_weight`` per labelled window.

Exact in the threshold: a file's total is a sum of terms, each switched on once the threshold
falls to some score, so the total over every candidate threshold is one sorted cumulative sum.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]

#: σ(−1): the credit of a detection on a window's first row, scaled to 1.
TP_FULL = float(2.0 / (1.0 + math.exp(-5.0)) - 1.0)

PROFILES = ("standard", "reward_low_FP_rate", "reward_low_FN_rate")


@dataclass(frozen=True)
class Profile:
    name: str
    tp_weight: float
    fp_weight: float
    fn_weight: float


def load_profiles(root: Path) -> dict[str, Profile]:
    raw = json.loads((root / "config" / "profiles.json").read_text("utf-8"))
    out = {}
    for name, body in raw.items():
        cm = body["CostMatrix"]
        out[name] = Profile(name, cm["tpWeight"], cm["fpWeight"], cm["fnWeight"])
    return out


def probation_rows(n: int, share: float = 0.15, cap: int = 750) -> int:
    """Rows of the probationary period of an n-row file."""
    return min(math.floor(share * n), cap)


def scaled_sigmoid(p: FloatArray) -> FloatArray:
    """σ(p) = 2/(1+e^{5p}) − 1, and −1 beyond p = 3."""
    with np.errstate(over="ignore"):
        s: FloatArray = 2.0 / (1.0 + np.exp(5.0 * p)) - 1.0
    return np.where(p > 3.0, -1.0, s)


def _stamp(s: str) -> np.datetime64:
    return np.datetime64(datetime.fromisoformat(s.strip()))


@dataclass
class FileLayout:
    """Where each row of one file stands relative to its windows (independent of scores)."""

    n: int
    probation: int
    window_of: npt.NDArray[np.int64]  # window index per row, -1 outside every window
    position: FloatArray  # σ argument per row (inside: −(right−i+1)/width; outside: past prev)
    has_prev: npt.NDArray[np.bool_]  # an outside row with a window before it
    windows: list[tuple[int, int]] = field(default_factory=list)  # (first, last) rows
    scored_windows: int = 0  # windows with at least one row after probation

    @classmethod
    def build(cls, stamps: npt.NDArray[np.datetime64], windows: list[list[str]]) -> FileLayout:
        n = stamps.size
        prob = probation_rows(n)
        window_of = np.full(n, -1, dtype=np.int64)
        position = np.zeros(n)
        has_prev = np.zeros(n, dtype=bool)
        spans: list[tuple[int, int]] = []
        for k, (a, b) in enumerate(windows):
            lo = int(np.searchsorted(stamps, _stamp(a), side="left"))
            hi = int(np.searchsorted(stamps, _stamp(b), side="right")) - 1
            if hi < lo:
                continue
            window_of[lo : hi + 1] = k
            width = hi - lo + 1
            idx = np.arange(lo, hi + 1)
            position[lo : hi + 1] = -(hi - idx + 1) / width
            spans.append((lo, hi))
        # outside rows: distance past the end of the most recent window
        prev_right, prev_width = -1, 0
        span_iter = iter(spans)
        nxt = next(span_iter, None)
        for i in range(n):
            while nxt is not None and i > nxt[1]:
                prev_right, prev_width = nxt[1], nxt[1] - nxt[0] + 1
                nxt = next(span_iter, None)
            if window_of[i] >= 0 or prev_right < 0:
                continue
            has_prev[i] = True
            position[i] = abs(prev_right - i) / max(prev_width - 1, 1)
        scored = sum(1 for _lo, hi in spans if hi >= prob)
        return cls(n, prob, window_of, position, has_prev, spans, scored)


@dataclass(frozen=True)
class Terms:
    """A file's score as a function of the threshold: const + Σ weight[v ≥ threshold]."""

    const: float
    values: FloatArray
    weights: FloatArray


def terms(layout: FileLayout, scores: FloatArray, profile: Profile) -> Terms:
    """The terms of one file's total under one profile."""
    n = layout.n
    live = np.arange(n) >= layout.probation
    unw = scaled_sigmoid(layout.position)
    outside = live & (layout.window_of < 0)
    fp_w = np.where(layout.has_prev[outside], unw[outside], -1.0) * profile.fp_weight
    vals = [scores[outside]]
    wts = [fp_w]
    const = 0.0
    for k, (lo, hi) in enumerate(layout.windows):
        a = max(lo, layout.probation)
        if a > hi:
            continue
        del k
        const -= profile.fn_weight
        s = scores[a : hi + 1]
        credit = unw[a : hi + 1] * (profile.tp_weight / TP_FULL)
        # records of the running maximum: the earliest row at or above each threshold
        run_max = np.maximum.accumulate(s)
        rec = np.flatnonzero(np.concatenate([[True], run_max[1:] > run_max[:-1]]))
        m = s[rec]
        c = credit[rec]
        delta = np.empty_like(c)
        delta[:-1] = c[:-1] - c[1:]
        delta[-1] = c[-1] + profile.fn_weight
        vals.append(m)
        wts.append(delta)
    return Terms(const, np.concatenate(vals), np.concatenate(wts))


def total_at(t: Terms, threshold: float) -> float:
    return float(t.const + t.weights[t.values >= threshold].sum())


def sweep(all_terms: list[Terms]) -> tuple[FloatArray, FloatArray]:
    """(thresholds, corpus total at each), thresholds descending over every distinct score."""
    const = sum(t.const for t in all_terms)
    v = np.concatenate([t.values for t in all_terms])
    w = np.concatenate([t.weights for t in all_terms])
    order = np.argsort(-v, kind="stable")
    v, w = v[order], w[order]
    cum = np.cumsum(w)
    last = np.flatnonzero(np.concatenate([v[1:] != v[:-1], [True]]))  # last of each tie
    return v[last], const + cum[last]


@dataclass(frozen=True)
class ProfileResult:
    profile: str
    threshold: float
    raw: float
    null: float
    perfect: float
    score: float  # normalised, null 0, perfect 100


def normalise(raw: float, null: float, perfect: float) -> float:
    return 100.0 * (raw - null) / (perfect - null)


@dataclass
class Corpus:
    """NAB's files, stamps and windows, read once."""

    root: Path
    files: list[str]  # "category/name.csv"
    values: dict[str, FloatArray]
    stamps: dict[str, npt.NDArray[np.datetime64]]
    layouts: dict[str, FileLayout]
    labelled_windows: int

    @classmethod
    def load(cls, root: Path) -> Corpus:
        windows = json.loads((root / "labels" / "combined_windows.json").read_text("utf-8"))
        files = sorted(windows)
        values, stamps, layouts = {}, {}, {}
        for f in files:
            st, v = read_series(root / "data" / f)
            values[f], stamps[f] = v, st
            layouts[f] = FileLayout.build(st, windows[f])
        total = sum(len(w) for w in windows.values())
        return cls(root, files, values, stamps, layouts, total)


def read_series(path: Path) -> tuple[npt.NDArray[np.datetime64], FloatArray]:
    """(timestamps, values) of one NAB csv (header `timestamp,value`)."""
    st: list[np.datetime64] = []
    vals: list[float] = []
    with path.open(encoding="utf-8") as fh:
        next(fh)
        for line in fh:
            a, _, b = line.rstrip("\n").partition(",")
            st.append(_stamp(a))
            vals.append(float(b.split(",")[0]))
    return np.array(st, dtype="datetime64[s]"), np.array(vals, dtype=np.float64)


def score_corpus(
    corpus: Corpus,
    scores: dict[str, FloatArray],
    profiles: dict[str, Profile],
    threshold: float | None = None,
) -> dict[str, ProfileResult]:
    """Each profile's normalised score, at its best corpus-wide threshold (or the given one)."""
    out = {}
    for name, prof in profiles.items():
        ts = [terms(corpus.layouts[f], scores[f], prof) for f in corpus.files]
        if threshold is None:
            th, tot = sweep(ts)
            best = int(np.argmax(tot))
            thr, raw = float(th[best]), float(tot[best])
        else:
            thr = threshold
            raw = sum(total_at(t, thr) for t in ts)
        null = -prof.fn_weight * sum(corpus.layouts[f].scored_windows for f in corpus.files)
        perfect = prof.tp_weight * corpus.labelled_windows
        out[name] = ProfileResult(name, thr, raw, null, perfect, normalise(raw, null, perfect))
    return out


def per_file_raw(
    corpus: Corpus, scores: dict[str, FloatArray], prof: Profile, threshold: float
) -> dict[str, float]:
    return {f: total_at(terms(corpus.layouts[f], scores[f], prof), threshold) for f in corpus.files}


def category_scores(
    corpus: Corpus, scores: dict[str, FloatArray], prof: Profile, threshold: float
) -> dict[str, float]:
    """Normalised score per category at the corpus threshold (null and perfect per category)."""
    raw = per_file_raw(corpus, scores, prof, threshold)
    windows = json.loads((corpus.root / "labels" / "combined_windows.json").read_text("utf-8"))
    cats: dict[str, list[str]] = {}
    for f in corpus.files:
        cats.setdefault(f.split("/")[0], []).append(f)
    out = {}
    for cat, fs in sorted(cats.items()):
        null = -prof.fn_weight * sum(corpus.layouts[f].scored_windows for f in fs)
        perfect = prof.tp_weight * sum(len(windows[f]) for f in fs)
        if perfect - null <= 0:
            continue  # no windows: the category is judged by its false positives only
        out[cat] = normalise(sum(raw[f] for f in fs), null, perfect)
    return out


def detections(
    corpus: Corpus, scores: dict[str, FloatArray], threshold: float
) -> tuple[int, int, int]:
    """(windows detected, windows scored, detections outside windows) after probation."""
    hit = total = fp = 0
    for f in corpus.files:
        lay, s = corpus.layouts[f], scores[f]
        live = np.arange(lay.n) >= lay.probation
        det = live & (s >= threshold)
        fp += int(np.count_nonzero(det & (lay.window_of < 0)))
        for lo, hi in lay.windows:
            if hi < lay.probation:
                continue
            total += 1
            hit += int(det[lo : hi + 1].any())
    return hit, total, fp
