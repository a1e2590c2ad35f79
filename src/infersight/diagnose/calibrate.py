"""Calibrated confidence: a root's raw confidence mapped to how often such answers were right.

`rank.confidence` scores a verdict from how many conditions held and how strong their changes
were; that figure orders roots but is no probability. `calibration.json` (shipped next to this
module) holds, per kind of root (`named`: a rule names it where the walk ended on its own
signals; `indirect`: a rule read from the effects of what ended there, or a limit named beside
the root whose work it could not take; `unnamed`: a change at a node no rule names), the
blocks of an isotonic fit of "was the first root right" on the raw figure,
measured on every labelled incident the project has (docs/calibration.md; refit with
`python -m bench.calibration`). A raw figure maps to the calibrated one by straight lines
between the blocks' centres, held flat beyond the first and the last.

The file is part of the product: missing or damaged, the first use says so in one line
(`CalibrationError`); it never falls back to the raw figure silently.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import json
import math
from importlib import resources
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from infersight.diagnose.result import RootCause

Kind = Literal["named", "indirect", "unnamed"]
#: the answers a kind's curve was fitted on: its own, or all of them (too few of its own)
FittedOn = Literal["named", "indirect", "unnamed", "all"]
KINDS: tuple[Kind, ...] = ("named", "indirect", "unnamed")
FILE = "calibration.json"
#: the format this module reads; a file of another version is refused, never guessed at
VERSION = 2
#: the prefix of a root no rule names (`change@NODE`)
UNNAMED_PREFIX = "change@"
REFIT = "refit it with `python -m bench.calibration` or reinstall infersight"


class CalibrationError(ValueError):
    """The calibration file cannot be used; `str()` is the one line to print."""


class Curve(BaseModel):
    """One kind's fit: block centres (raw, strictly increasing) and their share right
    (non-decreasing), both within 0..1."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    x: tuple[float, ...] = Field(min_length=1)
    y: tuple[float, ...] = Field(min_length=1)
    pairs: int = Field(ge=0, description="answers of this kind the fit saw")
    fitted_on: FittedOn

    @model_validator(mode="after")
    def _monotone(self) -> Curve:
        if len(self.x) != len(self.y):
            raise ValueError(f"x has {len(self.x)} breakpoints, y {len(self.y)}")
        for name, vals in (("x", self.x), ("y", self.y)):
            if not all(math.isfinite(v) and 0.0 <= v <= 1.0 for v in vals):
                raise ValueError(f"{name} holds a value outside 0..1")
        if any(b <= a for a, b in itertools.pairwise(self.x)):
            raise ValueError("x is not strictly increasing")
        if any(b < a for a, b in itertools.pairwise(self.y)):
            raise ValueError("y decreases: the map would not be monotone")
        return self


class Calibration(BaseModel):
    """calibration.json: the fit per kind and where it came from."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    version: int
    made: str = Field(description="UTC date of the fit")
    command: str = Field(description="the command that made the file")
    pairs: dict[str, int] = Field(description="answers per source the fit saw")
    kinds: dict[Kind, Curve]
    #: how it was fitted and what it scored (informational: the map reads only `kinds`)
    fit: dict[str, Any] = Field(default_factory=dict)
    figures: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _complete(self) -> Calibration:
        if self.version != VERSION:
            raise ValueError(f"version {self.version}, this infersight reads {VERSION}")
        missing = [k for k in KINDS if k not in self.kinds]
        if missing:
            raise ValueError(f"no fit for kind {missing[0]!r}")
        return self

    def map(self, raw: float, kind: Kind) -> float:
        """The calibrated figure for a raw confidence of a root of this kind."""
        if not math.isfinite(raw):
            raise ValueError(f"raw confidence {raw!r} is not a number")
        curve = self.kinds[kind]
        return round(float(np.interp(raw, curve.x, curve.y)), 3)


def parse(text: str, where: str) -> Calibration:
    """A calibration from the text of a file; CalibrationError naming `where` otherwise."""
    try:
        return Calibration.model_validate(json.loads(text))
    except json.JSONDecodeError as exc:
        raise CalibrationError(
            f"{where}: not JSON ({exc.msg}, line {exc.lineno}); {REFIT}"
        ) from None
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"]) or "the document"
        msg = str(first["msg"]).removeprefix("Value error, ")
        raise CalibrationError(f"{where}: {field}: {msg}; {REFIT}") from None


def load(path: Path) -> Calibration:
    """A calibration file at `path` (one that a refit wrote, or a test's)."""
    from infersight import userfile

    try:
        text = userfile.read_text(path, "calibration file")
    except userfile.UserFileError as exc:
        raise CalibrationError(f"{exc}; {REFIT}") from None
    return parse(text, f"calibration file {path}")


@functools.cache
def shipped() -> Calibration:
    """The calibration the package ships, read once."""
    where = f"infersight's {FILE}"
    try:
        text = resources.files("infersight.diagnose").joinpath(FILE).read_text("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise CalibrationError(f"{where} is missing or unreadable ({exc}); {REFIT}") from None
    return parse(text, where)


def kind_of(root: RootCause) -> Kind:
    """`unnamed` for a change at a node no rule names; `indirect` for a rule's root where the
    walk ended on other changes than the rule's own (read from their effects), or a limit named
    beside the root that sent it the work: inferred, not seen, and right less often; `named`
    for any other rule's root."""
    if root.unnamed or root.hypothesis.startswith(UNNAMED_PREFIX):
        return "unnamed"
    return "indirect" if root.triggered_by or not root.direct else "named"


def raw_of(root: RootCause) -> float:
    """The root's figure before calibration (a document older than version 7 has only one)."""
    return root.confidence if root.raw_confidence is None else root.raw_confidence


def calibrate(raw: float, kind: Kind, calibration: Calibration | None = None) -> float:
    """The calibrated confidence of a root of `kind` whose raw figure is `raw`."""
    return (calibration or shipped()).map(raw, kind)


def calibrated(root: RootCause, calibration: Calibration | None = None) -> RootCause:
    """The root with its confidence calibrated; the raw figure kept in `raw_confidence`."""
    return dataclasses.replace(
        root,
        confidence=calibrate(root.confidence, kind_of(root), calibration),
        raw_confidence=root.confidence,
    )


def in_rank_order(roots: tuple[RootCause, ...]) -> tuple[RootCause, ...]:
    """Each root calibrated and shown no surer than the roots ranked before it. The fit
    measures first answers only, and the ranking already says a later root is the less likely
    one: a second root no rule names would otherwise read 98% under a first read at 84%."""
    out: list[RootCause] = []
    cap = 1.0
    for r in sorted(roots, key=lambda r: r.rank):
        c = calibrated(r)
        cap = min(cap, c.confidence)
        out.append(dataclasses.replace(c, confidence=cap))
    return tuple(out)
