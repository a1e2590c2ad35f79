"""Statistical fallback: rank the anomalous signals no confirmed hypothesis explains.

In the spirit of BARO / N-Sigma: for each anomalous (signal, instance) left unexplained, the
shift of its distribution at the onset is measured as a robust standardised median difference,
|median(after) - median(before)| / (1.4826 · MAD(before)), with a floor on the scale so a flat
line does not make an infinite score. The highest shifts come first, so an unknown change is
shown, never hidden.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from infersight.detect import Anomaly
from infersight.diagnose.config import MAD_TO_SIGMA
from infersight.diagnose.context import Context
from infersight.diagnose.result import UnexplainedChange
from infersight.units import format_value


def shift_score(ctx: Context, signal: str, instance: str, at: float) -> float | None:
    row = ctx.row(signal, instance)
    if row is None:
        return None
    cfg = ctx.config
    k = ctx.frame.index_of(at)
    pre, post = row[:k], row[k:]
    pre, post = pre[~np.isnan(pre)], post[~np.isnan(post)]
    if pre.size < cfg.fallback_min_before or post.size < 1:
        return None
    m0, m1 = float(np.median(pre)), float(np.median(post))
    scale = MAD_TO_SIGMA * float(np.median(np.abs(pre - m0)))
    scale = max(scale, cfg.fallback_rel_scale_floor * abs(m0), 1e-9)
    return min(abs(m1 - m0) / scale, cfg.fallback_score_cap)


def unexplained(
    ctx: Context, anomalies: Iterable[Anomaly], explained: set[tuple[str, str]]
) -> list[UnexplainedChange]:
    best: dict[tuple[str, str], UnexplainedChange] = {}
    for a in anomalies:
        key = (a.signal, a.instance)
        if key in explained or a.weak:
            continue
        if a.kind == "absent":
            score: float | None = ctx.config.fallback_score_cap
        else:
            score = shift_score(ctx, a.signal, a.instance, a.onset)
        if score is None:
            score = a.score
        u = ctx.unit(a.signal)
        cap = ctx.config.fallback_score_cap
        shift = f"≥ {cap:g}" if score >= cap else f"{score:.3g}"  # the cap is no measurement
        text = (
            f"{a.signal} on {a.instance} changed ({a.kind}, {a.direction}): "
            f"{format_value(a.baseline, u)} → {format_value(a.observed, u)}, shift {shift} σ; "
            "no known failure mode explains it"
        )
        ch = UnexplainedChange(
            signal=a.signal,
            instance=a.instance,
            layer=a.layer,
            score=round(float(score), 3),
            statement=text,
            onset=a.onset,
            baseline=a.baseline,
            observed=a.observed,
        )
        if key not in best or best[key].score < ch.score:
            best[key] = ch
    ranked = sorted(best.values(), key=lambda c: (-c.score, c.onset or 0.0, c.signal))
    return ranked[: ctx.config.fallback_max_changes]
