"""The throughput curve with its knee and the recommended range, as SVG (for the HTML
report: labelled axes, escaped text) and as PNG (numpy and zlib alone: a raster of the same
picture without text, for a ticket or a chat; its labels are the SVG's)."""

from __future__ import annotations

import itertools
import struct
import zlib
from html import escape

import numpy as np

from infersight.capacity.recommend import BatchAdvice
from infersight.capacity.results import Sweep

W, H = 640, 300
LEFT, RIGHT, TOP, BOTTOM = 64, 56, 30, 40
BLUE, GREY, RED, GREEN, ORANGE = (
    (31, 119, 180),
    (170, 170, 170),
    (214, 39, 40),
    (44, 160, 44),
    (255, 127, 14),
)


def _scale(sweep: Sweep) -> tuple[float, float, float, float]:
    xs, ys = sweep.xs, sweep.ys
    return min(xs), max(xs), 0.0, max(max(ys), 1e-12) * 1.08


def _sx(x: float, x0: float, x1: float) -> float:
    return LEFT + (x - x0) / ((x1 - x0) or 1.0) * (W - LEFT - RIGHT)


def _sy(y: float, y0: float, y1: float) -> float:
    return H - BOTTOM - (y - y0) / ((y1 - y0) or 1.0) * (H - TOP - BOTTOM)


def _p99s(sweep: Sweep) -> list[float | None]:
    return [p.p("p99") for p in sweep.points]


def svg(sweep: Sweep, advice: BatchAdvice) -> str:
    x0, x1, y0, y1 = _scale(sweep)
    pts = " ".join(
        f"{_sx(x, x0, x1):.1f},{_sy(y, y0, y1):.1f}"
        for x, y in zip(sweep.xs, sweep.ys, strict=True)
    )
    smooth = " ".join(
        f"{_sx(x, x0, x1):.1f},{_sy(y, y0, y1):.1f}"
        for x, y in zip(sweep.xs, advice.knee.smoothed, strict=True)
    )
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {H}" width="{W}" '
        f'height="{H}" role="img" font-family="sans-serif" font-size="11">',
        f"<title>{escape(advice.summary())}</title>",
        f'<line x1="{LEFT}" y1="{H - BOTTOM}" x2="{W - RIGHT}" y2="{H - BOTTOM}" stroke="#444"/>',
        f'<line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{H - BOTTOM}" stroke="#444"/>',
    ]
    if advice.low is not None and advice.high is not None:
        a, b = _sx(advice.low, x0, x1), _sx(advice.high, x0, x1)
        parts.append(
            f'<rect x="{a:.1f}" y="{TOP}" width="{max(b - a, 1):.1f}" '
            f'height="{H - TOP - BOTTOM}" fill="#2ca02c" opacity="0.15"/>'
        )
    if advice.knee.x is not None:
        k = _sx(advice.knee.x, x0, x1)
        parts.append(
            f'<line x1="{k:.1f}" y1="{TOP}" x2="{k:.1f}" y2="{H - BOTTOM}" stroke="#d62728" '
            f'stroke-dasharray="4 3"/><text x="{k + 4:.1f}" y="{TOP + 12}" fill="#d62728">'
            f"knee {advice.knee.x:g}</text>"
        )
    if advice.setting is not None:
        s = _sx(advice.setting, x0, x1)
        parts.append(
            f'<line x1="{s:.1f}" y1="{TOP}" x2="{s:.1f}" y2="{H - BOTTOM}" stroke="#2ca02c"/>'
            f'<text x="{s + 4:.1f}" y="{TOP + 26}" fill="#2ca02c">set {advice.setting}</text>'
        )
    parts.append(f'<polyline points="{smooth}" fill="none" stroke="#aaa" stroke-dasharray="2 2"/>')
    parts.append(f'<polyline points="{pts}" fill="none" stroke="#1f77b4" stroke-width="2"/>')
    lat = [(x, v) for x, v in zip(sweep.xs, _p99s(sweep), strict=True) if v is not None]
    if len(lat) >= 2:
        top = max(v for _, v in lat) * 1.08
        lp = " ".join(f"{_sx(x, x0, x1):.1f},{_sy(v, 0.0, top):.1f}" for x, v in lat)
        parts.append(f'<polyline points="{lp}" fill="none" stroke="#ff7f0e" stroke-width="1.5"/>')
        parts.append(
            f'<text x="{W - RIGHT + 4}" y="{TOP + 8}" fill="#ff7f0e">p99 {top * 1000:.0f} ms</text>'
        )
    for x in sweep.xs:
        parts.append(
            f'<text x="{_sx(x, x0, x1):.1f}" y="{H - BOTTOM + 14}" text-anchor="middle">'
            f"{x:g}</text>"
        )
    parts.append(
        f'<text x="{LEFT - 6}" y="{TOP + 4}" text-anchor="end">{y1:.4g}</text>'
        f'<text x="{LEFT - 6}" y="{H - BOTTOM}" text-anchor="end">0</text>'
        f'<text x="{(LEFT + W - RIGHT) / 2:.0f}" y="{H - 8}" text-anchor="middle">'
        f"{escape(sweep.axis)}</text>"
        f'<text x="{LEFT}" y="{TOP - 10}" fill="#1f77b4">throughput '
        f"({escape(sweep.throughput_unit)})</text>"
    )
    parts.append("</svg>")
    return "\n".join(parts)


def _line(
    img: np.ndarray,
    a: tuple[float, float],
    b: tuple[float, float],
    rgb: tuple[int, int, int],
    width: int = 2,
) -> None:
    n = int(max(abs(b[0] - a[0]), abs(b[1] - a[1]))) + 1
    xs = np.linspace(a[0], b[0], n).round().astype(int)
    ys = np.linspace(a[1], b[1], n).round().astype(int)
    for dx in range(width):
        for dy in range(width):
            xx, yy = np.clip(xs + dx, 0, W - 1), np.clip(ys + dy, 0, H - 1)
            img[yy, xx] = rgb


def _polyline(
    img: np.ndarray, pts: list[tuple[float, float]], rgb: tuple[int, int, int], width: int = 2
) -> None:
    for a, b in itertools.pairwise(pts):
        _line(img, a, b, rgb, width)


def png(sweep: Sweep, advice: BatchAdvice) -> bytes:
    img = np.full((H, W, 3), 255, dtype=np.uint8)
    x0, x1, y0, y1 = _scale(sweep)
    if advice.low is not None and advice.high is not None:
        a, b = int(_sx(advice.low, x0, x1)), int(_sx(advice.high, x0, x1))
        img[TOP : H - BOTTOM, a : max(b, a + 1)] = (213, 236, 213)
    _line(img, (LEFT, H - BOTTOM), (W - RIGHT, H - BOTTOM), (68, 68, 68), 1)
    _line(img, (LEFT, TOP), (LEFT, H - BOTTOM), (68, 68, 68), 1)
    for x in sweep.xs:  # a tick per step
        sx = _sx(x, x0, x1)
        _line(img, (sx, H - BOTTOM), (sx, H - BOTTOM + 5), (68, 68, 68), 1)
    if advice.knee.x is not None:
        k = _sx(advice.knee.x, x0, x1)
        for y in range(TOP, H - BOTTOM, 8):
            _line(img, (k, y), (k, y + 4), RED, 2)
    if advice.setting is not None:
        s = _sx(advice.setting, x0, x1)
        _line(img, (s, TOP), (s, H - BOTTOM), GREEN, 2)
    _polyline(
        img,
        [
            (_sx(x, x0, x1), _sy(y, y0, y1))
            for x, y in zip(sweep.xs, advice.knee.smoothed, strict=True)
        ],
        GREY,
        1,
    )
    _polyline(
        img,
        [(_sx(x, x0, x1), _sy(y, y0, y1)) for x, y in zip(sweep.xs, sweep.ys, strict=True)],
        BLUE,
        2,
    )
    lat = [(x, v) for x, v in zip(sweep.xs, _p99s(sweep), strict=True) if v is not None]
    if len(lat) >= 2:
        top = max(v for _, v in lat) * 1.08
        _polyline(img, [(_sx(x, x0, x1), _sy(v, 0.0, top)) for x, v in lat], ORANGE, 1)
    return encode_png(img)


def encode_png(img: np.ndarray) -> bytes:
    """An RGB uint8 array (H × W × 3) as PNG bytes."""
    h, w, _ = img.shape
    raw = b"".join(b"\x00" + img[y].tobytes() for y in range(h))

    def chunk(kind: bytes, data: bytes) -> bytes:
        crc = zlib.crc32(kind + data) & 0xFFFFFFFF
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)

    header = struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(raw, 9))
        + chunk(b"IEND", b"")
    )
