"""`stress compare -o FILE.html`: the comparison as one self-contained page, with a plot of
P99 and throughput per step, run A beside run B (inline SVG, no script, no external asset)."""

from __future__ import annotations

from html import escape

from infersight.stress.compare import Comparison

W, H, PAD = 640, 220, 48


def _bars(title: str, unit: str, rows: list[tuple[str, float | None, float | None]]) -> str:
    peak = max([v for _, a, b in rows for v in (a, b) if v is not None] or [1.0]) or 1.0
    n = max(1, len(rows))
    group = (W - 2 * PAD) / n
    bar = group * 0.35
    parts = [
        f'<svg viewBox="0 0 {W} {H}" width="{W}" height="{H}" role="img" '
        f'aria-label="{escape(title)}">',
        f'<text x="{PAD}" y="18" font-size="13">{escape(title)} ({escape(unit)})</text>',
        f'<line x1="{PAD}" y1="{H - PAD}" x2="{W - PAD}" y2="{H - PAD}" stroke="#888"/>',
    ]
    for i, (name, a, b) in enumerate(rows):
        x0 = PAD + i * group + group * 0.12
        for j, (v, colour) in enumerate(((a, "#7a8ca5"), (b, "#d9822b"))):
            if v is None:
                continue
            h = (H - 2 * PAD) * v / peak
            x = x0 + j * (bar + 2)
            parts.append(
                f'<rect x="{x:.1f}" y="{H - PAD - h:.1f}" width="{bar:.1f}" height="{h:.1f}" '
                f'fill="{colour}"><title>{"AB"[j]} {escape(name)}: {v:.3g} {unit}</title></rect>'
            )
            parts.append(
                f'<text x="{x + bar / 2:.1f}" y="{H - PAD - h - 4:.1f}" font-size="10" '
                f'text-anchor="middle">{v:.3g}</text>'
            )
        parts.append(f'<text x="{x0:.1f}" y="{H - PAD + 16}" font-size="11">{escape(name)}</text>')
    parts.append(
        f'<text x="{W - PAD - 120}" y="18" font-size="11"><tspan fill="#7a8ca5">■ A</tspan> '
        f'<tspan fill="#d9822b">■ B</tspan></text></svg>'
    )
    return "\n".join(parts)


def render(result: Comparison, name_a: str, name_b: str) -> str:
    p99 = [
        (
            r["step"],
            None if r["p99_s_a"] is None else r["p99_s_a"] * 1000,
            None if r["p99_s_b"] is None else r["p99_s_b"] * 1000,
        )
        for r in result.rows
    ]
    tput = [(r["step"], r["throughput_a"], r["throughput_b"]) for r in result.rows]
    reasons = "".join(f"<li>{escape(x)}</li>" for x in result.reasons)
    return (
        "<!doctype html><html><head><meta charset='utf-8'>"
        f"<title>stress compare: {escape(result.verdict)}</title></head>"
        "<body style='font-family:sans-serif;max-width:720px;margin:2em auto'>"
        f"<h1>B is {escape(result.verdict)}</h1>"
        f"<p>A: {escape(name_a)}<br>B: {escape(name_b)}</p><ul>{reasons}</ul>"
        f"{_bars('P99 per step', 'ms', p99)}{_bars('Throughput per step', 'req/s', tput)}"
        "</body></html>\n"
    )
