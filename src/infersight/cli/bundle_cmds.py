"""`infersight bundle inspect|import`: look inside evidence bundles, make them from files."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import numpy as np
import typer
from rich.table import Table

from infersight.cli.catalog_cmds import MappingsOpt
from infersight.cli.common import (
    EXIT_USAGE,
    FormatOpt,
    JsonAliasOpt,
    console,
    fail,
    markup_safe,
    print_json,
    wants_json,
)
from infersight.cli.connection import LimitOpt
from infersight.exporters import load_catalog
from infersight.report.view import signal_unit
from infersight.timeparse import iso, parse_duration, parse_time, promql_duration
from infersight.units import format_value

app = typer.Typer(help="Evidence bundles: one file with the frozen scene.", no_args_is_help=True)


def _limits(raise_limit: list[str] | None) -> Any:
    from infersight.limits import LimitError, current

    try:
        return current(raise_limit or ())
    except LimitError as exc:
        fail(str(exc), EXIT_USAGE)


def _signal_rows(bundle: Any) -> list[dict[str, Any]]:
    rows = []
    frame = bundle.frame
    for name in frame.signals:
        s = frame.get(name)
        vals = s.values[~np.isnan(s.values)]
        rows.append(
            {
                "signal": name,
                "instances": len(s.instances),
                "points": int(vals.size),
                "min": float(vals.min()) if vals.size else None,
                "median": float(np.median(vals)) if vals.size else None,
                "max": float(vals.max()) if vals.size else None,
            }
        )
    return rows


@app.command("inspect")
def inspect(
    bundle: Annotated[Path, typer.Argument(help="A bundle: NAME.tar.gz or a directory.")],
    show_signals: Annotated[
        bool, typer.Option("--signals", help="Also list every signal with its value range.")
    ] = False,
    fmt: FormatOpt = "table",
    as_json: JsonAliasOpt = False,
    raise_limit: LimitOpt = None,
) -> None:
    """Verify a bundle (every member's sha256, schema, types) and summarise what it holds."""
    as_json = wants_json(fmt, as_json)
    from infersight.bundle import read_bundle, summarize

    b = read_bundle(bundle, _limits(raise_limit))
    summary = summarize(b).to_dict()
    if show_signals or as_json:
        summary["signal_stats"] = _signal_rows(b)
    if as_json:
        print_json(summary)
        return
    # everything below the bundle's own figures is data: shown as typed, never read as markup
    src = ", ".join(f"{markup_safe(k)}={markup_safe(v)}" for k, v in summary["source"].items())
    console.print(
        f"[bold]{markup_safe(bundle)}[/] ({summary['file_size']:,} bytes), verified; source: {src}"
    )
    for w in summary["windows"]:
        console.print(
            f"  window {markup_safe(w['name'])}: {iso(w['start'])} → {iso(w['end'])} "
            f"every {w['step']:g}s, {w['points']:,} points"
        )
    layers = ", ".join(f"{k} {v}" for k, v in summary["signals_per_layer"].items())
    console.print(
        f"  {summary['signal_count']} signals × {summary['instance_count']} instances ({layers})"
    )
    if summary["missing"]:
        t = Table(title=f"{len(summary['missing'])} signals unavailable (not healthy: unknown)")
        t.add_column("signal", no_wrap=True)
        t.add_column("why", overflow="fold")
        for k, v in summary["missing"].items():
            t.add_row(markup_safe(k), markup_safe(v))
        console.print(t)
    if summary["artifacts"]:
        console.print(
            "  artifacts: "
            + ", ".join(f"{markup_safe(k)} ({v:,} B)" for k, v in summary["artifacts"].items())
        )
    if show_signals:
        t = Table(title="signals (incident window)")
        for col in ("signal", "instances", "points", "min", "median", "max"):
            t.add_column(col, no_wrap=col == "signal")
        for r in summary["signal_stats"]:
            cells = [
                format_value(r[k], signal_unit(r["signal"])) if r[k] is not None else "-"
                for k in ("min", "median", "max")
            ]
            t.add_row(r["signal"], str(r["instances"]), str(r["points"]), *cells)
        console.print(t)


@app.command("import")
def import_files(
    files: Annotated[
        list[Path],
        typer.Argument(
            help="Text exposition / OpenMetrics files (saved /metrics scrapes), or Prometheus "
            "query_range JSON responses (*.json)."
        ),
    ],
    out: Annotated[Path, typer.Option("--out", "-o", help="Bundle to write.")],
    interval: Annotated[
        str | None,
        typer.Option(
            "--interval",
            metavar="DURATION",
            help="Time between untimestamped scrapes (each file, or each `# EOF` block, is one).",
        ),
    ] = None,
    start: Annotated[
        str | None, typer.Option("--start", help="Time of the first untimestamped scrape.")
    ] = None,
    instance: Annotated[
        str | None,
        typer.Option(
            "--instance",
            help="Instance label for samples without one. Default: successive scrapes of one "
            "target are one instance named for what the files share (scrape-*.prom: scrape); "
            "with --same-time, each file's stem.",
        ),
    ] = None,
    same_time: Annotated[
        bool,
        typer.Option(
            "--same-time",
            help="The files are different targets scraped at the same moments, not successive "
            "scrapes of one target.",
        ),
    ] = False,
    metric_name: Annotated[
        str | None,
        typer.Option("--metric-name", help="Metric name for query_range series without __name__."),
    ] = None,
    step: Annotated[
        str | None,
        typer.Option(
            "--step", help="Grid resolution (default: --interval or 15s).", metavar="DURATION"
        ),
    ] = None,
    window: Annotated[
        str, typer.Option("--rate-window", help="Window of rate().", metavar="DURATION")
    ] = "5m",
    overwrite: Annotated[
        bool, typer.Option("--overwrite", help="Replace an existing bundle.")
    ] = False,
    fmt: FormatOpt = "table",
    as_json: JsonAliasOpt = False,
    mappings: MappingsOpt = None,
    raise_limit: LimitOpt = None,
) -> None:
    """Turn saved scrapes or query_range JSON into a bundle of canonical signals.

    Exporter names are mapped to canonical signals exactly as `pull` does on a live server.

    Examples:

      infersight bundle import scrape-*.prom --interval 15s --start 2026-12-02T02:00:00Z -o b.tar.gz

      infersight bundle import vllm.json dcgm.json -o b.tar.gz
    """
    as_json = wants_json(fmt, as_json)
    from infersight.bundle import BundleError, check_target, write_bundle
    from infersight.limits import LimitExceeded
    from infersight.sources.exposition import read_exposition
    from infersight.sources.local import ONLY_NAN, canonical_frame
    from infersight.sources.promjson import read_promjson
    from infersight.sources.raw import RawStore

    limits = _limits(raise_limit)
    for f in files:
        if f.is_dir():
            fail(f"{f}: is a directory; pass the files inside it (e.g. {f}/*.prom)", EXIT_USAGE)
        if f.exists() and not f.is_file():
            fail(f"{f}: not a regular file (a FIFO, a device?); save it to a file", EXIT_USAGE)
        if not f.is_file():
            fail(f"{f}: no such file", EXIT_USAGE)
    try:
        check_target(out, overwrite)
    except BundleError as exc:
        fail(str(exc), EXIT_USAGE)
    try:
        interval_s = parse_duration(interval) if interval else None
        start_s = parse_time(start) if start else None
        step_s = parse_duration(step) if step else (interval_s or 15.0)
        rate_window = promql_duration(parse_duration(window))
    except ValueError as exc:
        fail(str(exc), EXIT_USAGE)
    json_files = [f for f in files if f.suffix == ".json"]
    text_files = [f for f in files if f.suffix != ".json"]
    store = RawStore()
    for f in json_files:
        for s in read_promjson(f, name=metric_name, limits=limits):
            store.add_many(s.name, s.labels, s.ts, s.values)
    if text_files:
        if interval_s is not None and start_s is None:
            fail("--interval needs --start (the time of the first scrape)", EXIT_USAGE)
        scraped = read_exposition(
            text_files,
            instance=instance,
            start=start_s,
            interval=interval_s,
            clock="per_file" if same_time else "sequential",
            limits=limits,
        )
        for s in scraped:
            store.add_many(s.name, s.labels, s.ts, s.values)
    span = store.time_range()
    if span is None:
        fail("the files hold no samples", EXIT_USAGE)
    first, last = span
    if all(np.isnan(s.values).all() for s in store):
        fail(f"every value in the files is NaN ({len(store)} series); nothing to import")
    catalog = load_catalog(mappings or [])
    try:
        with np.errstate(all="ignore"):  # ±Inf samples are data, not a warning to print
            res = canonical_frame(store, catalog, first, last, step_s, rate_window, limits=limits)
    except LimitExceeded as exc:
        fail(str(exc))
    if not res.frame.signals:
        nan = sorted({r for r in res.missing.values() if r.startswith(ONLY_NAN)})
        if nan:  # the known exporters' metrics are there, every sample of them NaN
            fail(f"no canonical signal could be computed: {'; '.join(nan)}; nothing to import")
        fail(
            "no canonical signal could be computed: none of the metric names belongs to a known "
            "exporter (see `infersight exporters`, or add a mapping folder with --mappings)"
        )
    source = {"kind": "bundle-import", "files": ", ".join(f.name for f in files)}
    used = dict.fromkeys(f for fams in res.sources.values() for f in fams.split(",") if f)
    if used:  # what the stack is made of: the runbooks are chosen for it
        source["families"] = ",".join(used)
    path = write_bundle(
        out,
        {"incident": res.frame},
        source,
        missing=res.missing,
        overwrite=overwrite,
        queries={"incident": res.runs},
    )
    summary = {
        "bundle": str(path),
        "start": first,
        "end": last,
        "step": step_s,
        "raw_series": len(store),
        "signals": res.frame.signals,
        "instances": res.frame.instances,
        "missing": res.missing,
    }
    if as_json:
        print_json(summary)
        return
    console.print(
        f"wrote [bold]{markup_safe(path)}[/]: {len(store)} raw series → "
        f"{len(res.frame.signals)} signals × {len(res.frame.instances)} instances, "
        f"{iso(first)} → {iso(last)}"
    )
