"""manifest.json of an evidence bundle: its pydantic schema and the rules for member names.

Members are named by relative POSIX paths: `manifest.json`, `metrics/<window>.parquet` (one per
window) and `artifacts/<name>` (anything a later feature attaches). The manifest lists the sha256
of every member but itself, and per window the query each signal's series came from (`queries`,
since schema version 2: the family and the PromQL as sent, the rate window, range and step).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from infersight import controls
from infersight.limits import Limits
from infersight.provenance import QueryRun
from infersight.redact import redact_url
from infersight.signals import all_signals
from infersight.sources.jsonload import JSONDepthError, loads
from infersight.timeparse import check_epoch

SCHEMA_VERSION = 2
#: versions this infersight reads (1 had no `queries`: its reports quote the catalog's PromQL)
READABLE_VERSIONS = (1, 2)
MANIFEST = "manifest.json"
INCIDENT = "incident"
METRICS_DIR = "metrics/"
ARTIFACTS_DIR = "artifacts/"

#: beyond this a declared grid is nonsense even to count (2^53: floats stop holding integers);
#: what may be read is `Limits.grid_points`, far lower
MAX_DECLARED_POINTS = 2**53
_WINDOW_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
_SHA256 = re.compile(r"[0-9a-f]{64}")


def check_member_name(name: str) -> str:
    """The name itself when it is a safe relative POSIX path, else ValueError saying why."""
    if not name:
        raise ValueError("empty name")
    if "\\" in name:
        raise ValueError(f"{name!r} contains a backslash")
    if name.startswith("/"):
        raise ValueError(f"{name!r} is an absolute path")
    if "\x00" in name:
        raise ValueError(f"{name!r} contains a NUL byte")
    parts = name.split("/")
    if any(p in ("", ".", "..") for p in parts):
        raise ValueError(f"{name!r} has an empty, '.' or '..' part")
    return name


def window_file(window: str) -> str:
    return f"{METRICS_DIR}{window}.parquet"


def grid_points(start: float, end: float, step: float) -> int:
    """Number of grid points of a window, ValueError when end is not on the grid."""
    span = (end - start) / step
    if not math.isfinite(span) or abs(span) > MAX_DECLARED_POINTS:
        raise ValueError(f"{start}..{end} by {step} is not a grid of a countable number of points")
    n = round(span)
    if n < 0 or abs(span - n) > 1e-6:
        raise ValueError(f"end {end} is not start {start} plus a whole number of steps {step}")
    return n + 1


def _known_signals(names: list[str]) -> list[str]:
    unknown = sorted(set(names) - set(all_signals()))
    if unknown:
        raise ValueError(f"unknown canonical signal(s): {', '.join(unknown)}")
    return names


def _sorted_unique(values: list[str]) -> list[str]:
    if values != sorted(set(values)):
        raise ValueError("must be sorted and free of duplicates")
    return values


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class WindowSpec(_Strict):
    """One time window: grid start/end (epoch seconds, inclusive), step and its Parquet member."""

    start: float
    end: float
    step: Annotated[float, Field(gt=0)]
    file: str

    @model_validator(mode="after")
    def _on_grid(self) -> WindowSpec:
        if not all(math.isfinite(x) for x in (self.start, self.end, self.step)):
            raise ValueError("start, end and step must be finite")
        grid_points(self.start, self.end, self.step)
        # a time no calendar can show (year 318857) breaks every report that prints it
        check_epoch(self.start, "start")
        check_epoch(self.end, "end")
        return self

    @property
    def n(self) -> int:
        return grid_points(self.start, self.end, self.step)


def _text(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be empty")
    return value


class QuerySpec(_Strict):
    """One query a signal's series came from: the exporter family and the PromQL as sent."""

    family: Annotated[str, AfterValidator(_text)]
    expr: Annotated[str, AfterValidator(_text)]


class WindowQueries(_Strict):
    """The queries of one window: the rate window written into them, the range and step they
    were sent with (epoch seconds), and per signal the query of each family its series came
    from, the highest-priority family first."""

    rate_window: Annotated[str, AfterValidator(_text)]
    start: float
    end: float
    step: Annotated[float, Field(gt=0)]
    signals: dict[str, Annotated[list[QuerySpec], Field(min_length=1)]]

    @model_validator(mode="after")
    def _sane(self) -> WindowQueries:
        if not all(math.isfinite(x) for x in (self.start, self.end, self.step)):
            raise ValueError("start, end and step must be finite")
        if self.end < self.start:
            raise ValueError("end is before start")
        check_epoch(self.start, "start")
        check_epoch(self.end, "end")
        _known_signals(list(self.signals))
        return self

    def runs(self) -> tuple[QueryRun, ...]:
        return tuple(
            QueryRun(sig, q.family, q.expr, self.rate_window, self.start, self.end, self.step)
            for sig, qs in self.signals.items()
            for q in qs
        )


def window_queries(runs: Sequence[QueryRun]) -> dict[str, Any] | None:
    """The manifest's record of one window's runs (all sent with one rate window, range and
    step), to be validated with the manifest; None for no runs."""
    if not runs:
        return None
    first = runs[0]
    signals: dict[str, list[dict[str, str]]] = {}
    for r in runs:
        signals.setdefault(r.signal, []).append({"family": r.family, "expr": r.expr})
    return {
        "rate_window": first.rate_window,
        "start": first.start,
        "end": first.end,
        "step": first.step,
        "signals": signals,
    }


def _source(value: dict[str, str]) -> dict[str, str]:
    if not value.get("kind"):
        raise ValueError("needs a non-empty 'kind' (prometheus, bundle-import, simulator, ...)")
    # a bundle is attached to tickets: a URL's credentials never go into it
    return {k: redact_url(v) for k, v in value.items()}


class Manifest(_Strict):
    schema_version: int
    created_at: datetime
    source: Annotated[dict[str, str], AfterValidator(_source)]
    windows: dict[str, WindowSpec]
    signals: Annotated[list[str], AfterValidator(_sorted_unique), AfterValidator(_known_signals)]
    instances: Annotated[list[str], AfterValidator(_sorted_unique)]
    missing: dict[str, str] = Field(default_factory=dict)
    members: dict[str, str]
    notes: str | None = None
    #: per window: the query each signal's series came from (absent before version 2, and
    #: where no query ran: a simulator's own signals)
    queries: dict[str, WindowQueries] = Field(default_factory=dict)

    @field_validator("schema_version")
    @classmethod
    def _version(cls, v: int) -> int:
        if v not in READABLE_VERSIONS:
            raise ValueError(f"unknown schema_version {v}; this infersight reads {SCHEMA_VERSION}")
        return v

    @field_validator("created_at")
    @classmethod
    def _utc(cls, v: datetime) -> datetime:
        if v.utcoffset() != timedelta(0):
            raise ValueError("must be an ISO 8601 time in UTC (ending Z or +00:00)")
        return v.astimezone(UTC)

    @field_validator("missing")
    @classmethod
    def _missing_known(cls, v: dict[str, str]) -> dict[str, str]:
        _known_signals(list(v))
        return v

    @field_validator("members")
    @classmethod
    def _members(cls, v: dict[str, str]) -> dict[str, str]:
        for name, digest in v.items():
            check_member_name(name)
            if name == MANIFEST:
                raise ValueError("must not list manifest.json itself")
            if not (name.startswith(ARTIFACTS_DIR) or name.startswith(METRICS_DIR)):
                raise ValueError(f"{name!r} is neither under metrics/ nor under artifacts/")
            if not _SHA256.fullmatch(digest):
                raise ValueError(f"{name!r}: {digest!r} is not a lowercase sha256 hex digest")
        return v

    @model_validator(mode="after")
    def _windows(self) -> Manifest:
        if INCIDENT not in self.windows:
            raise ValueError(f"windows: needs the main window {INCIDENT!r}")
        files = {w.file for w in self.windows.values()}
        for name, w in self.windows.items():
            if not _WINDOW_NAME.fullmatch(name):
                raise ValueError(f"windows: bad window name {name!r}")
            if w.file != window_file(name):
                raise ValueError(f"windows.{name}.file must be {window_file(name)!r}")
            if w.file not in self.members:
                raise ValueError(f"windows.{name}.file {w.file!r} is not listed in members")
        stray = [m for m in self.members if m.startswith(METRICS_DIR) and m not in files]
        if stray:
            raise ValueError(f"members: {', '.join(stray)} belong to no window")
        unknown = sorted(set(self.queries) - set(self.windows))
        if unknown:
            raise ValueError(f"queries: {', '.join(unknown)} is no window of the bundle")
        return self

    def runs(self, window: str = INCIDENT) -> tuple[QueryRun, ...]:
        """The queries the window's series came from; () when the bundle does not record them
        (written before version 2, or from data no query produced)."""
        q = self.queries.get(window)
        return q.runs() if q is not None else ()

    def to_json(self) -> bytes:
        data = self.model_dump(mode="json", exclude_none=True)
        data["created_at"] = self.created_at.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        return (json.dumps(data, indent=2, sort_keys=False, ensure_ascii=False) + "\n").encode()


def parse_manifest(data: bytes, max_depth: int | None = None) -> Manifest:
    """Manifest from manifest.json bytes; ValueError with one line naming the first problem.

    JSON nested deeper than `max_depth` (default: `Limits().json_depth`) is refused unparsed.
    """
    depth = Limits().json_depth if max_depth is None else max_depth
    try:
        raw: Any = loads(data, depth)
    except JSONDepthError as e:
        raise ValueError(f"{e}; {Limits().hint('json_depth')}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ValueError(f"not valid JSON ({e})") from None
    if not isinstance(raw, dict):
        raise ValueError("not a JSON object")
    version = raw.get("schema_version")
    if version not in READABLE_VERSIONS or isinstance(version, bool):
        shown = "absent" if version is None else repr(version)
        reads = ", ".join(map(str, READABLE_VERSIONS))
        raise ValueError(
            f"schema_version {shown} is not one this infersight reads ({reads}); "
            "upgrade infersight or re-create the bundle"
        )
    try:
        return Manifest.model_validate(raw)
    except ValidationError as e:
        err = e.errors()[0]
        # a key is the file's: one holding a newline would break the one-line refusal
        loc = controls.shown(".".join(str(p) for p in err["loc"]), one_line=True) or "manifest"
        more = f" (and {e.error_count() - 1} more)" if e.error_count() > 1 else ""
        msg = str(err["msg"]).removeprefix("Value error, ")  # pydantic's prefix says nothing
        raise ValueError(f"{loc}: {controls.shown(msg, one_line=True)}{more}") from None
