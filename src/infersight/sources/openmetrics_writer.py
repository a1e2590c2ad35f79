"""Write a RawStore as timestamped OpenMetrics text, for `promtool tsdb create-blocks-from
openmetrics FILE DIR` (backfilling a real Prometheus with simulated history).

What promtool 2.42 accepts, checked against the real tool: the input must end with `# EOF`
(without it: "data does not end with # EOF"); timestamps are float seconds. Its parser is
lenient about families (a counter family `foo` with `foo_total` samples, `# TYPE foo_total
counter`, even a counter sample without `_total`, and non-contiguous families all load), but we
write what the OpenMetrics spec asks so stricter readers agree: one `# TYPE` line per family
before its samples, the family's samples contiguous, counters as family `foo` with samples
`foo_total`. Out-of-order samples of one series are dropped by promtool, so each series is
written in time order (a RawStore keeps them sorted).

`types` maps a family name (`foo` or `foo_total` for a counter, `h` for a histogram with
`h_bucket`/`h_sum`/`h_count`, `s` for a summary with `s`/`s_sum`/`s_count`) to its type:
counter, gauge, histogram, summary or unknown. Metrics not covered are written as `unknown`, as
is a counter-typed metric whose name lacks `_total` (OpenMetrics requires it).

    write_openmetrics(store, out: TextIO | str | PathLike, types=None) -> int  (samples written)
    estimated_bytes(store) -> int  (about how large that text is, before writing it)
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import IO, TextIO

from infersight.safe_write import open_atomic
from infersight.sources.promfloat import sample_float
from infersight.sources.raw import Labels, RawSeries, RawStore

_SUFFIXES = {
    "histogram": ("_bucket", "_sum", "_count"),
    "summary": ("", "_sum", "_count"),
}
KNOWN_TYPES = {"counter", "gauge", "histogram", "summary", "unknown"}
Progress = Callable[[int, int], None]


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _labels(labels: Labels) -> str:
    if not labels:
        return ""
    return "{" + ",".join(f'{k}="{_escape(v)}"' for k, v in labels) + "}"


def _family_of(name: str, types: Mapping[str, str]) -> tuple[str, str]:
    """(family name, type) of a stored metric name."""
    if name.endswith("_total"):
        base = name[: -len("_total")]
        if types.get(base) == "counter" or types.get(name) == "counter":
            return base, "counter"
    for kind, suffixes in _SUFFIXES.items():
        for suffix in suffixes:
            if suffix and name.endswith(suffix):
                base = name[: -len(suffix)]
                if types.get(base) == kind:
                    return base, kind
    kind = types.get(name, "unknown")
    return name, kind if kind in ("gauge", "summary") else "unknown"


def families(
    store: RawStore, types: Mapping[str, str] | None = None
) -> dict[tuple[str, str], list[RawSeries]]:
    """Series grouped by (family, type), families and series in a stable, sorted order."""
    types = dict(types or {})
    bad = {k: v for k, v in types.items() if v not in KNOWN_TYPES}
    if bad:
        raise ValueError(f"unsupported metric type(s) {bad}; use one of {sorted(KNOWN_TYPES)}")
    grouped: dict[tuple[str, str], list[RawSeries]] = {}
    for series in sorted(store, key=lambda s: (s.name, s.labels)):
        grouped.setdefault(_family_of(series.name, types), []).append(series)
    names = [fam for fam, _ in grouped]
    clash = sorted({n for n in names if names.count(n) > 1})
    if clash:
        raise ValueError(f"metric family name(s) used with two types: {', '.join(clash)}")
    return dict(sorted(grouped.items()))


def _write(
    store: RawStore,
    f: IO[str],
    types: Mapping[str, str] | None,
    progress: Progress | None = None,
) -> int:
    count, total = 0, store_samples(store)
    for (family, kind), members in families(store, types).items():
        f.write(f"# TYPE {family} {kind}\n")
        for s in members:
            prefix = f"{s.name}{_labels(s.labels)} "
            f.writelines(
                f"{prefix}{sample_float(v)} {t!r}\n"
                for t, v in zip(s.ts.tolist(), s.values.tolist(), strict=True)
            )
            count += s.ts.size
            if progress:
                progress(count, total)
    f.write("# EOF\n")
    return count


def store_samples(store: RawStore) -> int:
    """Every sample the store holds: what `write_openmetrics` writes, one line each."""
    return sum(int(s.ts.size) for s in store)


def estimated_bytes(store: RawStore) -> int:
    """About how large the text of `store` is: each series' line as its first sample spells
    it, times its samples (the figures of one series vary little in length)."""
    size = 0
    for s in store:
        if s.ts.size:
            first = f"{sample_float(float(s.values[0]))} {float(s.ts[0])!r}\n"
            size += len(f"{s.name}{_labels(s.labels)} {first}".encode()) * int(s.ts.size)
    return size


def write_openmetrics(
    store: RawStore,
    out: TextIO | str | os.PathLike[str],
    types: Mapping[str, str] | None = None,
    overwrite: bool = True,
    progress: Progress | None = None,
) -> int:
    """Write every sample of `store` as timestamped OpenMetrics text; return the sample count.

    A path is written through `safe_write` (an unpredictable temporary made with O_EXCL, then
    renamed; only over a regular file); `overwrite=False` refuses an existing one. `progress`
    hears (samples written, samples in all) after each series.
    """
    if not isinstance(out, str | os.PathLike):
        return _write(store, out, types, progress)
    families(store, types)  # a bad `types` is refused before any file is made
    with open_atomic(out, overwrite=overwrite) as f:
        return _write(store, f, types, progress)
