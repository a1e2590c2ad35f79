"""Limits on what any input may make infersight allocate, checked before the allocation.

Every reader that sizes memory from its input (a bundle's declared grid, a tarball's members, a
JSON document's nesting, an HTTP answer) checks against one `Limits`. The defaults hold every
real incident with room to spare; an input past one is refused with one line naming the limit
and how to raise it:

    --raise-limit NAME=VALUE          on the commands that read bundles or servers (repeatable)
    INFERSIGHT_LIMITS="NAME=VALUE,…"  in the environment, for every command

Sizes take a unit (`512MiB`, `2GiB`, `1e6`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict, Field, ValidationError

ENV = "INFERSIGHT_LIMITS"
FLAG = "--raise-limit"
MiB = 1 << 20
GiB = 1 << 30
_UNITS = {"": 1, "k": 1000, "kb": 1000, "kib": 1 << 10, "mb": 10**6, "mib": MiB, "gb": 10**9}
_UNITS |= {"gib": GiB}
_SIZE = re.compile(r"\s*([0-9][0-9_.eE+]*)\s*([a-zA-Z]*)\s*")


class LimitError(ValueError):
    """A value given for a limit that is not one (unknown name, not a positive number)."""


class LimitExceeded(ValueError):
    """An input past a limit: one line naming the limit and how to raise it."""


class Limits(BaseModel):
    """Caps per input. Each field's description says why its default is what it is."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    grid_points: int = Field(
        100_000,
        gt=0,
        description="Time-grid points per window. A week at 15 s is 40,320; more is a typo in "
        "--step or timestamps in the wrong unit, not an analysis.",
    )
    grid_values: int = Field(
        50_000_000,
        gt=0,
        description="Values of one window (signals × instances × grid points): 400 MB as float64. "
        "90 signals × 500 instances × an hour at 15 s is 11 M.",
    )
    total_bytes: int = Field(
        1 * GiB,
        gt=0,
        description="Bytes of all members of a bundle, decompressed. Pulled bundles of a fleet of "
        "hundreds are tens of MB; a GiB leaves room for large artifacts.",
    )
    member_bytes: int = Field(
        256 * MiB,
        gt=0,
        description="Bytes of one member. A window's Parquet holds about 2 bytes per point; "
        "256 MiB is far beyond the grid_values cap.",
    )
    members: int = Field(
        10_000,
        gt=0,
        description="Members of a bundle: a manifest, a Parquet per window, a few artifacts.",
    )
    json_depth: int = Field(
        64,
        gt=0,
        description="Nesting of a JSON document. A manifest nests 3 deep, a query_range answer 5; "
        "Python's parser crashes near 1,000.",
    )
    response_bytes: int = Field(
        256 * MiB,
        gt=0,
        description="Bytes of one HTTP answer, streamed and cut off at the cap. A range query is "
        "chunked at 11,000 points per series; 256 MiB is thousands of series.",
    )

    file_bytes: int = Field(
        64 * MiB,
        gt=0,
        description="Bytes of one file a user names that is read whole: a config, a token, a "
        "saved alert, rule, runbook and mapping files, a load test's CSV, a stress run's "
        "results, a diagnosis report, a postmortem page or an audit log. The largest of "
        "these in real use (a fleet's diagnosis report, a year of runbook audit) are a few MB; "
        "64 MiB is ten times that and still parses in seconds. Saved scrapes and query_range "
        "answers are HTTP answers kept on disk and take response_bytes.",
    )
    sim_points: int = Field(
        10_000_000,
        gt=0,
        description="Instances × time points of one simulator run, refused before it starts. "
        "Its memory grows with them (about 1.15 kB a point); the largest documented run, "
        "1,000 instances over 26 h at 15 s, is 6.2 M points and peaks at 6.7 GiB "
        "(docs/benchmarks.md, simulator memory). 10 M is about 11 GiB.",
    )

    ahead_s: int = Field(
        86_400,
        gt=0,
        description="Seconds a bundle's window may end after the bundle was made. Clocks skew "
        "by seconds and a local time written as UTC by at most 14 hours; a window later than a "
        "day past its own capture holds timestamps in the wrong unit or a clock set to the "
        "wrong year, and every reading in it is misdated.",
    )

    def replace(self, **changes: int) -> Limits:
        return self.model_copy(update=changes)

    def check_grid(self, n: int, rows: int, what: str) -> None:
        """Refuse a grid of `n` points × `rows` series before it is allocated."""
        if n > self.grid_points:
            raise LimitExceeded(
                f"{what}: {n:,} grid points, over the {self.grid_points:,} limit; use a larger "
                f"--step, or {self.hint('grid_points')}"
            )
        if n * rows > self.grid_values:
            raise LimitExceeded(
                f"{what}: {rows:,} series × {n:,} points, over the {self.grid_values:,}-value "
                f"limit; {self.hint('grid_values')}"
            )

    def hint(self, name: str, flag: bool = True) -> str:
        """How to raise limit NAME, for the end of an error line (`flag`: the command has
        --raise-limit; without it only the environment is named)."""
        if not flag:
            return f"raise it with {ENV}={name}=N"
        return f"raise it with {FLAG} {name}=N or {ENV}={name}=N"


def parse_size(text: str) -> int:
    m = _SIZE.fullmatch(text)
    unit = m.group(2).lower() if m else ""
    if m is None or unit not in _UNITS:
        raise LimitError(f"{text!r} is not a size; use e.g. 200000, 512MiB, 2GiB")
    try:
        value = float(m.group(1)) * _UNITS[unit]
    except ValueError:
        raise LimitError(f"{text!r} is not a size; use e.g. 200000, 512MiB, 2GiB") from None
    if not 0 < value < 2**62:
        raise LimitError(f"{text!r}: a limit must be positive (and below 2^62)")
    return int(value)


def parse_limits(items: Iterable[str], base: Limits | None = None) -> Limits:
    """`base` (default: the defaults) with `NAME=VALUE` items applied; LimitError when bad."""
    changes: dict[str, int] = {}
    for item in items:
        for part in item.split(","):
            if not part.strip():
                continue
            name, sep, value = part.partition("=")
            name = name.strip()
            if not sep or name not in Limits.model_fields:
                known = ", ".join(Limits.model_fields)
                raise LimitError(f"{part.strip()!r}: give NAME=VALUE with NAME one of {known}")
            changes[name] = parse_size(value)
    try:
        return Limits.model_validate({**(base or Limits()).model_dump(), **changes})
    except ValidationError as e:  # pragma: no cover - parse_size already checks the range
        raise LimitError(str(e.errors()[0]["msg"])) from None


def current(extra: Iterable[str] = ()) -> Limits:
    """The defaults, raised by $INFERSIGHT_LIMITS and then by `extra` (the command's flags)."""
    env = os.environ.get(ENV, "")
    try:
        base = parse_limits([env]) if env.strip() else Limits()
    except LimitError as e:
        raise LimitError(f"{ENV}: {e}") from None
    return parse_limits(extra, base)
