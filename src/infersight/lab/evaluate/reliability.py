"""The reliability diagram: per bin of stated confidence, the mean stated against the share
right, as a markdown table and a standalone SVG (drawn with `report/svg.py`'s helpers; inline
styles, as it is read as a file and not inside the HTML report)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from html import escape

import numpy as np

from infersight.frame import FloatArray
from infersight.report.svg import nice_ticks, polyline


@dataclass(frozen=True)
class Bin:
    lo: float
    hi: float
    count: int
    stated: float  # mean stated confidence (nan: empty)
    right: float  # share right (nan: empty)


def bins(conf: Sequence[float] | FloatArray, right: Sequence[bool], n: int = 10) -> list[Bin]:
    """`n` equal-width bins of the stated figure over 0..1 (the ECE's own)."""
    c = np.asarray(conf, dtype=np.float64)
    r = np.asarray(right, dtype=np.float64)
    idx = np.minimum((np.clip(c, 0.0, 1.0) * n).astype(int), n - 1)
    out = []
    for b in range(n):
        m = idx == b
        k = int(m.sum())
        stated = float(c[m].mean()) if k else float("nan")
        share = float(r[m].mean()) if k else float("nan")
        out.append(Bin(b / n, (b + 1) / n, k, stated, share))
    return out


def table(series: Mapping[str, Sequence[Bin]]) -> str:
    """One row per bin, per series: answers, mean stated, share right."""
    names = list(series)
    head = "| stated | " + " | ".join(f"{escape(n)}: answers, stated → right" for n in names)
    lines = [head + " |", "|---|" + "---|" * len(names)]
    first = next(iter(series.values()), [])
    for i, b in enumerate(first):
        cells = []
        for n in names:
            x = series[n][i]
            cells.append(f"{x.count}, {x.stated:.2f} → {x.right:.2f}" if x.count else "0")
        lines.append(f"| {b.lo:.1f}–{b.hi:.1f} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


W, H = 520, 470
LEFT, RIGHT, TOP, BOTTOM = 56, 170, 36, 48
#: each series' colour (a colour-blind-safe set) and dash, in the order given
STYLES = (("#7f7f7f", "4 3"), ("#1f77b4", ""), ("#d95f02", ""), ("#1b9e77", ""))


def svg(series: Mapping[str, Sequence[Bin]], title: str) -> str:
    """Stated (x) against right (y), 0..1 both, the diagonal of a perfect calibration; each
    series a line through its non-empty bins, a dot per bin sized by its count."""
    pw, ph = W - LEFT - RIGHT, H - TOP - BOTTOM

    def sx(v: FloatArray | float) -> FloatArray:
        return LEFT + np.asarray(v, dtype=np.float64) * pw

    def sy(v: FloatArray | float) -> FloatArray:
        return TOP + ph - np.asarray(v, dtype=np.float64) * ph

    most = max((b.count for bs in series.values() for b in bs), default=1) or 1
    el = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {H}" width="{W}" '
        f'height="{H}" role="img" font-family="sans-serif" font-size="11">',
        f"<title>{escape(title)}</title>",
        f'<rect x="{LEFT}" y="{TOP}" width="{pw}" height="{ph}" fill="#fafafa" stroke="#999"/>',
        f'<text x="{LEFT}" y="{TOP - 14}" font-size="13">{escape(title)}</text>',
    ]
    for t in nice_ticks(0.0, 1.0):
        x, y = float(sx(t)), float(sy(t))
        el += [
            f'<line x1="{LEFT}" x2="{LEFT + pw}" y1="{y:.1f}" y2="{y:.1f}" stroke="#e5e5e5"/>',
            f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{TOP}" y2="{TOP + ph}" stroke="#e5e5e5"/>',
            f'<text x="{LEFT - 6}" y="{y + 4:.1f}" text-anchor="end">{t:g}</text>',
            f'<text x="{x:.1f}" y="{TOP + ph + 16}" text-anchor="middle">{t:g}</text>',
        ]
    el += [
        f'<path d="{polyline(sx(np.array([0.0, 1.0])), sy(np.array([0.0, 1.0])))}" '
        'stroke="#444" stroke-dasharray="2 3" fill="none"/>',
        f'<text x="{LEFT + pw / 2:.0f}" y="{H - 10}" text-anchor="middle">stated confidence</text>',
        f'<text transform="translate(16,{TOP + ph / 2:.0f}) rotate(-90)" '
        'text-anchor="middle">share of answers right</text>',
    ]
    for i, (name, bs) in enumerate(series.items()):
        colour, dash = STYLES[i % len(STYLES)]
        full = [b for b in bs if b.count]
        xs = sx(np.array([b.stated for b in full]))
        ys = sy(np.array([b.right for b in full]))
        dashed = f' stroke-dasharray="{dash}"' if dash else ""
        if full:
            el.append(
                f'<path d="{polyline(xs, ys)}" stroke="{colour}" stroke-width="2" '
                f'fill="none"{dashed}/>'
            )
        for b, x, y in zip(full, xs, ys, strict=True):
            r = 2.5 + 4.5 * (b.count / most) ** 0.5
            el.append(
                f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{r:.1f}" fill="{colour}">'
                f"<title>{escape(name)}: {b.count} answers stated {b.stated:.2f}, "
                f"{b.right:.2f} right</title></circle>"
            )
        ly = TOP + 8 + 18 * i
        el += [
            f'<line x1="{LEFT + pw + 12}" x2="{LEFT + pw + 32}" y1="{ly}" y2="{ly}" '
            f'stroke="{colour}" stroke-width="2"{dashed}/>',
            f'<text x="{LEFT + pw + 36}" y="{ly + 4}">{escape(name)}</text>',
        ]
    ly = TOP + 8 + 18 * len(series)
    el += [
        f'<line x1="{LEFT + pw + 12}" x2="{LEFT + pw + 32}" y1="{ly}" y2="{ly}" stroke="#444" '
        'stroke-dasharray="2 3"/>',
        f'<text x="{LEFT + pw + 36}" y="{ly + 4}">perfect calibration</text>',
        f'<text x="{LEFT + pw + 12}" y="{ly + 22}">dot area: answers in the bin</text>',
        "</svg>",
    ]
    return "\n".join(el)
