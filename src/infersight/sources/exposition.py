"""Prometheus text exposition (0.0.4) and OpenMetrics 1.0 text, parsed into a RawStore.

Names are kept exactly as exposed (`foo_total`, `h_bucket`, `h_sum`, `h_count`,
`vllm:num_requests_waiting`), as Prometheus stores them. `_created` samples of counters,
histograms and summaries are dropped; exemplars are ignored; empty label values are dropped (as
Prometheus does); `le` and `quantile` values are normalised to one canonical spelling (see
`promfloat.label_float`: "1" and "1.0" both become "1.0").

Time: samples carry their own timestamps (text format: integer milliseconds; OpenMetrics: float
seconds), or none at all, in which case the caller passes `start` and `interval` and scrape k
(counted across the whole input) lies at start + k·interval. A file may hold several OpenMetrics
scrapes, each ending with `# EOF`. Mixing timestamped and untimestamped samples is an error.

Format: "auto" reads OpenMetrics when a `# EOF` line is present, else the text format.

    parse_exposition(text, *, source="<text>", instance=None, job=None, start=None,
                     interval=None, fmt="auto") -> RawStore
    read_exposition(paths, *, instance=None, job=None, start=None, interval=None,
                    fmt="auto", clock="sequential") -> RawStore

Bad input raises ExpositionError, one line: `file:line: what is wrong`.
"""

from __future__ import annotations

import contextlib
import math
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from infersight import userfile
from infersight.limits import Limits
from infersight.sources.promfloat import label_float
from infersight.sources.raw import Labels, RawStore
from infersight.timeparse import MAX_EPOCH, MIN_EPOCH

Format = Literal["auto", "text", "openmetrics"]
Clock = Literal["sequential", "per_file"]

_NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
_SAMPLE = re.compile(
    rf"({_NAME})[ \t]*"
    r'(?:\{((?:[^"}]++|"(?:[^"\\]++|\\.)*+")*+)\})?'
    r"[ \t]+([^ \t#]+)(?:[ \t]+([^ \t#]+))?[ \t]*(#.*)?"
)
_LABEL = re.compile(
    r'[ \t]*([a-zA-Z_][a-zA-Z0-9_]*)[ \t]*=[ \t]*"((?:[^"\\]++|\\.)*+)"[ \t]*(?:,|$)'
)
_INT = re.compile(r"[+-]?[0-9]+")
_ESCAPE = re.compile(r"\\(.)")
_ESCAPES = {"n": "\n", "\\": "\\", '"': '"'}
_META = re.compile(rf"#[ \t]+(HELP|TYPE|UNIT)[ \t]+({_NAME})(?:[ \t]+(.*))?")
_EOF = re.compile(r"^# EOF[ \t]*\r?$", re.M)
_TYPES = {
    "text": {"counter", "gauge", "histogram", "summary", "untyped"},
    "openmetrics": {
        "counter", "gauge", "histogram", "gaugehistogram", "summary", "stateset", "info",
        "unknown",
    },
}  # fmt: skip
_WITH_CREATED = {"counter", "histogram", "gaugehistogram", "summary"}
_FLOAT_LABELS = ("le", "quantile")


class ExpositionError(ValueError):
    """Malformed exposition text: `source:line: what is wrong`."""


def _err(source: str, lineno: int, what: str, line: str | None = None) -> ExpositionError:
    shown = f": {line[:80]!r}" if line is not None else ""
    return ExpositionError(f"{source}:{lineno}: {what}{shown}")


def _unescape(value: str) -> str:
    return _ESCAPE.sub(lambda m: _ESCAPES.get(m.group(1), m.group(0)), value)


def _parse_labels(text: str) -> Labels | str:
    """Sorted label pairs of a `{...}` body, or a message saying what is wrong."""
    pairs: dict[str, str] = {}
    pos, end = 0, len(text)
    while pos < end:
        m = _LABEL.match(text, pos)
        if m is None:
            if text[pos:].strip(" \t"):
                return f"malformed label at {text[pos : pos + 30]!r}"
            break
        name, value = m.group(1), m.group(2)
        if name in pairs:
            return f"label {name!r} given twice"
        if "\\" in value:
            value = _unescape(value)
        if name in _FLOAT_LABELS:
            with contextlib.suppress(ValueError):
                value = label_float(float(value))
        pairs[name] = value
        pos = m.end()
    return tuple(sorted((k, v) for k, v in pairs.items() if v != ""))


def _time_range_hint(ts: float, om: bool) -> str:
    """Why a timestamp past year 9999 (or before year 1) is refused, and what it likely is."""
    if ts > MAX_EPOCH and om:
        return (
            "timestamp lies past year 9999: OpenMetrics timestamps are seconds and this looks "
            "like milliseconds; divide by 1000 (or save it as the text format, which uses ms)"
        )
    if ts > MAX_EPOCH:
        return (
            "timestamp lies past year 9999: text-format timestamps are milliseconds and this "
            "looks like microseconds or nanoseconds"
        )
    return "timestamp lies before year 1"


def _number(text: str) -> float:
    if "_" in text:  # Python's float() takes 1_000; Prometheus does not
        raise ValueError(text)
    return float(text)


def _millis(text: str) -> float:
    if not _INT.fullmatch(text):
        raise ValueError(text)
    return int(text) / 1000.0


@dataclass
class _Series:
    name: str
    labels: Labels
    scrape: list[int] = field(default_factory=list)
    ts: list[float] = field(default_factory=list)
    values: list[float] = field(default_factory=list)


@dataclass
class Parsed:
    """One input parsed: its series, scrape count, whether samples had times, # TYPE lines."""

    source: str
    series: list[_Series]
    scrapes: int
    timestamped: bool | None  # None when there are no samples
    types: dict[str, str]


def parse_text(text: str, source: str = "<text>", fmt: Format = "auto") -> Parsed:
    """Parse one input (possibly several OpenMetrics scrapes) without placing it in time."""
    om = fmt == "openmetrics" or (fmt == "auto" and _EOF.search(text) is not None)
    allowed = _TYPES["openmetrics" if om else "text"]
    types: dict[str, str] = {}
    series: dict[tuple[str, str], _Series] = {}  # by name and label text, as written
    label_cache: dict[str, Labels] = {"": ()}
    scrape, pending, timestamped = 0, False, None
    last = 0
    if "\r" in text:
        text = text.replace("\r\n", "\n")
    for lineno, line in enumerate(text.split("\n"), 1):
        if not line or line.isspace():
            continue
        last = lineno
        if line[0] == "#":
            if om and line.rstrip(" \t") == "# EOF":
                scrape, pending = scrape + 1, False
                continue
            meta = _META.fullmatch(line)
            if meta is None:
                continue  # a comment
            pending = True
            if meta.group(1) == "TYPE":
                kind = (meta.group(3) or "").strip()
                if kind not in allowed:
                    raise _err(source, lineno, f"unknown metric type {kind!r}", line)
                types[meta.group(2)] = kind
            continue
        m = _SAMPLE.fullmatch(line)
        if m is None:
            raise _err(source, lineno, "malformed sample", line)
        name, label_text, value_text, ts_text, exemplar = m.groups()
        if exemplar is not None and not om:
            raise _err(source, lineno, "exemplars are only valid in OpenMetrics", line)
        pending = True
        if name.endswith("_created"):
            base = name[:-8]
            if types.get(base) in _WITH_CREATED or types.get(base + "_total") == "counter":
                continue
        try:
            value = _number(value_text)
        except ValueError:
            raise _err(source, lineno, f"bad value {value_text!r}", line) from None
        has_ts = ts_text is not None
        if timestamped is None:
            timestamped = has_ts
        elif has_ts != timestamped:
            raise _err(source, lineno, "mixes timestamped and untimestamped samples", line)
        ts = math.nan
        if has_ts:
            try:
                ts = _number(ts_text) if om else _millis(ts_text)
            except ValueError:
                unit = "seconds" if om else "integer milliseconds"
                raise _err(source, lineno, f"bad timestamp (want {unit})", line) from None
            if not math.isfinite(ts):
                raise _err(source, lineno, "timestamp is not finite", line)
            if not MIN_EPOCH <= ts <= MAX_EPOCH:
                raise _err(source, lineno, _time_range_hint(ts, om), line)
        s = series.get((name, label_text))
        if s is None:
            labels = label_cache.get(label_text or "")
            if labels is None:
                parsed = _parse_labels(label_text)
                if isinstance(parsed, str):
                    raise _err(source, lineno, parsed, line)
                labels = label_cache[label_text] = parsed
            s = series[(name, label_text)] = _Series(name, labels)
        s.scrape.append(scrape)
        s.ts.append(ts)
        s.values.append(value)
    if om and pending:
        raise _err(source, last, "OpenMetrics input must end with `# EOF`")
    return Parsed(source, list(series.values()), scrape if om else 1, timestamped, types)


def _with(labels: Labels, extra: dict[str, str | None]) -> Labels:
    have = {k for k, _ in labels}
    add = [(k, v) for k, v in extra.items() if v and k not in have]
    return tuple(sorted(labels + tuple(add))) if add else labels


def to_store(
    inputs: Iterable[tuple[Parsed, str | None]],
    *,
    job: str | None = None,
    start: float | None = None,
    interval: float | None = None,
    clock: Clock = "sequential",
    store: RawStore | None = None,
) -> RawStore:
    """Place parsed inputs (each with the instance label it supplies) in time, in a RawStore."""
    out = store if store is not None else RawStore()
    offset = 0
    first: Parsed | None = None
    for parsed, instance in inputs:
        if parsed.timestamped is not None:
            if first is not None and first.timestamped != parsed.timestamped:
                raise ExpositionError(
                    f"{parsed.source}: timestamps {'present' if parsed.timestamped else 'absent'}"
                    f" but {'absent' if parsed.timestamped else 'present'} in {first.source};"
                    " do not mix timestamped and untimestamped inputs"
                )
            first = first or parsed
        if parsed.timestamped is False and (start is None or not interval or interval <= 0):
            raise ExpositionError(
                f"{parsed.source}: samples have no timestamps; pass start and a positive interval"
                " (the time of the first scrape and the time between scrapes: --start, --interval)"
            )
        extra = {"instance": instance, "job": job}
        for s in parsed.series:
            if parsed.timestamped:
                ts: list[float] = s.ts
            else:
                assert start is not None and interval is not None
                ts = [start + (offset + k) * interval for k in s.scrape]
            out.add_many(s.name, _with(s.labels, extra), ts, s.values)
        if clock == "sequential":
            offset += parsed.scrapes
    return out


def parse_exposition(
    text: str,
    *,
    source: str = "<text>",
    instance: str | None = None,
    job: str | None = None,
    start: float | None = None,
    interval: float | None = None,
    fmt: Format = "auto",
) -> RawStore:
    """Samples of one exposition text; `instance`/`job` labels added where samples lack them."""
    parsed = parse_text(text, source, fmt)
    return to_store([(parsed, instance)], job=job, start=start, interval=interval)


def read_exposition(
    paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    *,
    instance: str | None = None,
    job: str | None = None,
    start: float | None = None,
    interval: float | None = None,
    fmt: Format = "auto",
    clock: Clock = "sequential",
    limits: Limits | None = None,
) -> RawStore:
    """Samples of one or several exposition files (each a saved scrape: at most
    `limits.response_bytes`, as the same answer over HTTP would be).

    Samples that lack an `instance` label get `instance`, or by default: with
    `clock="sequential"` (successive scrapes of one target, numbered across files in order)
    one name for every file, the files' common name (`one_target`): the scrapes of one target at
    different times are one instance's time series, not one instance per file; with
    `clock="per_file"` (several targets scraped at the same moments, numbered from 0 in each
    file) each file's stem.
    """
    items = [Path(p) for p in ([paths] if isinstance(paths, str | os.PathLike) else paths)]
    default = instance or (one_target(items) if clock == "sequential" else None)
    inputs: list[tuple[Parsed, str | None]] = []
    for path in items:
        try:
            text = userfile.read_text(path, limit="response_bytes", limits=limits)
        except userfile.UserFileError as e:
            raise ExpositionError(str(e)) from None
        inputs.append((parse_text(text, path.name, fmt), default or path.stem))
    return to_store(inputs, job=job, start=start, interval=interval, clock=clock)


def one_target(paths: Sequence[Path]) -> str:
    """The instance name of one target's scrapes saved to several files: what their names share
    (`scrape-001.prom` … `scrape-008.prom` → `scrape`; one file: its stem; nothing shared:
    `target`)."""
    stems = [p.stem for p in paths]
    if len(set(stems)) <= 1:
        return stems[0] if stems else "target"
    lo, hi = min(stems), max(stems)  # the text all stems share is what these two share
    shared = next((lo[:k] for k, (a, b) in enumerate(zip(lo, hi, strict=False)) if a != b), lo)
    return shared.rstrip("-_. 0123456789") or "target"
