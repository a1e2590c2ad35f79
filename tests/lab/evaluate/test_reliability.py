"""The reliability diagram's bins, table and SVG."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET

from infersight.lab.evaluate.reliability import bins, svg, table

NS = "{http://www.w3.org/2000/svg}"


def test_bins_are_the_ece_bins_with_their_mean_stated_and_share_right() -> None:
    bs = bins([0.05, 0.15, 0.15, 0.85, 1.0], [False, True, False, True, True], 10)
    assert len(bs) == 10 and [b.count for b in bs] == [1, 2, 0, 0, 0, 0, 0, 0, 1, 1]
    assert bs[1].stated == 0.15 and bs[1].right == 0.5
    assert math.isnan(bs[2].stated) and bs[9].right == 1.0


def test_the_table_has_a_row_per_bin_and_a_column_per_series() -> None:
    series = {"raw": bins([0.15, 0.85], [True, True]), "named": bins([0.5], [False])}
    md = table(series).splitlines()
    assert len(md) == 2 + 10 and md[0].count("answers, stated → right") == 2
    assert md[3] == "| 0.1–0.2 | 1, 0.15 → 1.00 | 0 |"


def test_the_svg_is_standalone_xml_with_the_diagonal_and_a_dot_per_filled_bin() -> None:
    series = {"raw <all>": bins([0.15, 0.85, 0.86], [True, True, False])}
    root = ET.fromstring(svg(series, "Reliability & more"))
    assert root.tag == f"{NS}svg" and root.find(f"{NS}title").text == "Reliability & more"  # type: ignore[union-attr]
    dots = root.findall(f"{NS}circle")
    assert len(dots) == 2  # two bins hold answers
    texts = [t.text for t in root.iter(f"{NS}text")]
    assert "raw <all>" in texts and "perfect calibration" in texts
    assert any(p.get("stroke-dasharray") == "2 3" for p in root.iter(f"{NS}path"))
