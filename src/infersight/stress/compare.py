"""`stress compare RUN_A RUN_B`: is B stronger, weaker or the same as A?

The figures compared are the whole run's P99, P50, throughput and error ratio, and step by
step the same. A difference counts only beyond the noise band: the relative spread of P99
between runs that should be equal, measured from repeated runs given as `--band-from`;
without a measurement a stated default is used and the verdict says so.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from infersight import userfile
from infersight.stress.runner import SCHEMA

DEFAULT_BAND = 0.35  # used only when no repeated runs measured the noise (said in the verdict)
BAND_FLOOR = 0.10
ERROR_MARGIN = 0.01  # one request in a hundred more failing is weaker whatever the band
# Two runs that span the measured band exactly are inside it: without a margin, float rounding
# of max/min - 1 against (b - a) / a called one run in five of such a pair "stronger".
BAND_EDGE = 1e-9


class RunFileError(Exception):
    """A run file that cannot be read; `str()` is the one line to print."""


def load_run(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(userfile.read_text(path))
    except userfile.UserFileError as exc:
        raise RunFileError(str(exc)) from None
    except ValueError:
        raise RunFileError(f"{path}: not JSON; expected a `stress run -o` results file") from None
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        raise RunFileError(f"{path}: not a stress run results file (schema {SCHEMA})")
    return data


def _rel(a: float | None, b: float | None) -> float | None:
    if a is None or b is None or a <= 0:
        return None
    return (b - a) / a


def noise_band(runs: list[dict[str, Any]]) -> float:
    """Relative spread of total P99 (max/min - 1) between runs that should be equal."""
    p99s = [r["total"]["p99_s"] for r in runs if r["total"].get("p99_s")]
    if len(p99s) < 2:
        raise RunFileError("measuring the noise band needs two runs or more with requests")
    return max(BAND_FLOOR, float(max(p99s)) / float(min(p99s)) - 1.0)


@dataclass
class Comparison:
    verdict: str  # stronger | weaker | same
    band: float
    band_measured: bool
    reasons: list[str] = field(default_factory=list)
    rows: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict,
            "noise_band": self.band,
            "noise_band_measured": self.band_measured,
            "reasons": self.reasons,
            "figures": self.rows,
        }


def compare(a: dict[str, Any], b: dict[str, Any], band: float | None = None) -> Comparison:
    if a.get("profile") != b.get("profile"):
        raise RunFileError(
            f"the runs used different profiles ({a.get('profile')} vs {b.get('profile')}); "
            "compare runs of one profile"
        )
    measured = band is not None
    band = band if band is not None else DEFAULT_BAND
    rows: list[dict[str, Any]] = []
    for sa, sb in zip([*a["steps"], a["total"]], [*b["steps"], b["total"]], strict=False):
        rows.append(
            {
                "step": sa["name"],
                **{f"{k}_a": sa.get(k) for k in ("throughput", "p50_s", "p99_s", "p999_s")},
                **{f"{k}_b": sb.get(k) for k in ("throughput", "p50_s", "p99_s", "p999_s")},
                "error_ratio_a": sa["error_ratio"],
                "error_ratio_b": sb["error_ratio"],
                "p99_change": _rel(sa.get("p99_s"), sb.get("p99_s")),
                "throughput_change": _rel(sa.get("throughput"), sb.get("throughput")),
            }
        )
    total = rows[-1]
    worse: list[str] = []
    better: list[str] = []
    p99c, thc = total["p99_change"], total["throughput_change"]
    # the median too, against the P99's band: the median is the steadier of the two, so a
    # move past the tail's noise is past its own; a fixed delay on every request (a longer
    # batching window) moves it plainly when the tail of a loaded machine hides it
    p50c = _rel(total.get("p50_s_a"), total.get("p50_s_b"))
    for name, change in (("P99", p99c), ("P50", p50c)):
        if change is not None and change > band + BAND_EDGE:
            worse.append(f"{name} {change:+.0%} (band ±{band:.0%})")
        if change is not None and change < -band / (1 + band) - BAND_EDGE:
            better.append(f"{name} {change:+.0%} (band ±{band:.0%})")
    if thc is not None and thc < -band / (1 + band) - BAND_EDGE:
        worse.append(f"throughput {thc:+.0%}")
    de = total["error_ratio_b"] - total["error_ratio_a"]
    if de > ERROR_MARGIN:
        worse.append(f"errors {total['error_ratio_a']:.1%} → {total['error_ratio_b']:.1%}")
    elif de < -ERROR_MARGIN:
        better.append(f"errors {total['error_ratio_a']:.1%} → {total['error_ratio_b']:.1%}")
    sat_a, sat_b = a.get("saturation_step"), b.get("saturation_step")
    if sat_a is None and sat_b is not None:
        worse.append(f"the SLO now breaks at step {sat_b}")
    if worse:
        verdict, reasons = "weaker", worse
    elif better:
        verdict, reasons = "stronger", better
    else:
        verdict, reasons = "same", [f"every change within the noise band (±{band:.0%})"]
    if not measured:
        reasons.append(f"noise band not measured: default ±{DEFAULT_BAND:.0%} used")
    return Comparison(verdict, band, measured, reasons, rows)
