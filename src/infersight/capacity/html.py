"""The capacity report as one self-contained HTML page: the advice, the plot (inline SVG and
the PNG as a data URL) and the steps as a table. Every string from data is escaped."""

from __future__ import annotations

import base64
from html import escape

from infersight.capacity.plot import png, svg
from infersight.capacity.recommend import BatchAdvice
from infersight.capacity.results import PERCENTILES, Sweep


def _ms(v: float | None) -> str:
    return "—" if v is None else f"{v * 1000:.1f}"


def html_report(sweep: Sweep, advice: BatchAdvice, title: str) -> str:
    rows = "\n".join(
        f"<tr><td>{p.x:g}</td><td>{p.throughput:.4g}</td>"
        + "".join(f"<td>{_ms(p.p(n))}</td>" for n in PERCENTILES)
        + f"<td>{'' if p.errors is None else p.errors}</td></tr>"
        for p in sweep.points
    )
    head = "".join(f"<th>{n} ms</th>" for n in PERCENTILES)
    data = base64.b64encode(png(sweep, advice)).decode("ascii")
    notes = "".join(f"<li>{escape(n)}</li>" for n in sweep.notes)
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{escape(title)}</title>
<style>body{{font-family:sans-serif;max-width:760px;margin:2em auto}}
td,th{{padding:2px 8px;text-align:right}}table{{border-collapse:collapse}}
tr:nth-child(even){{background:#f4f4f4}}</style></head><body>
<h1>{escape(title)}</h1>
<p><strong>{escape(advice.summary())}</strong></p>
<p>Source: {escape(sweep.source)} ({escape(sweep.axis)} against throughput in
{escape(sweep.throughput_unit)}). Blue: measured; grey dashes: smoothed (running median of
three, then non-decreasing); red dashes: the knee; green: the recommended setting and its
range; orange: p99 latency (own scale).</p>
{svg(sweep, advice)}
<p><img alt="the same plot as PNG" src="data:image/png;base64,{data}" width="320"></p>
<table><tr><th>{escape(sweep.axis)}</th><th>throughput</th>{head}<th>errors</th></tr>
{rows}</table>
<ul>{notes}</ul>
</body></html>
"""
