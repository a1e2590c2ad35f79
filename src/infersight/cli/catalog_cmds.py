"""`infersight signals` and `infersight exporters`: what infersight can read, and from where."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from infersight.cli.common import (
    EXIT_USAGE,
    FormatOpt,
    JsonAliasOpt,
    console,
    fail,
    print_json,
    wants_json,
)
from infersight.exporters import DEFAULT_WINDOW, load_catalog
from infersight.signals import Layer, all_signals

LayerOpt = Annotated[
    Layer | None, typer.Option("--layer", "-l", help="Only this layer.", case_sensitive=False)
]
#: the old visible `--json` of commands not yet on `--format` (see `common.FormatOpt`)
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")]
MappingsOpt = Annotated[
    list[Path] | None,
    typer.Option("--mappings", help="Folder of extra exporter mapping files (*.yaml); repeatable."),
]


def signals(
    layer: LayerOpt = None,
    exporter: Annotated[
        str | None,
        typer.Option("--exporter", "-e", help="Only signals this exporter family provides."),
    ] = None,
    promql: Annotated[
        bool, typer.Option("--promql", help="Show the PromQL of each mapping.")
    ] = False,
    plain: Annotated[
        bool,
        typer.Option(
            "--plain",
            help="Plain lines, each expression whole on its own line, to copy (the default "
            "with --promql when the output is piped).",
        ),
    ] = False,
    fmt: FormatOpt = "table",
    as_json: JsonAliasOpt = False,
    mappings: MappingsOpt = None,
) -> None:
    """List the canonical signals: layer, unit, which direction is bad, and who provides them.

    Examples:

      infersight signals --layer inference

      infersight signals --exporter vllm --promql
    """
    as_json = wants_json(fmt, as_json)
    catalog = load_catalog(mappings or [])
    if exporter is not None and exporter not in catalog.families:
        known = ", ".join(sorted(catalog.families))
        fail(f"unknown exporter family {exporter!r}; known: {known}", EXIT_USAGE)
    rows: list[dict[str, Any]] = []
    for sig in all_signals().values():
        if layer is not None and sig.layer is not layer:
            continue
        maps = [m for m in catalog.mappings_for(sig.name) if exporter in (None, m.family)]
        if exporter is not None and not maps:
            continue
        row = sig.to_dict()
        row["exporters"] = sorted({m.family for m in maps})
        if promql:
            row["promql"] = [
                {"family": m.family, "expr": m.render(DEFAULT_WINDOW), "note": m.note} for m in maps
            ]
        rows.append(row)
    if as_json:
        print_json(rows)
        return
    if plain or (promql and not sys.stdout.isatty()):  # a table cell wraps PromQL mid-token
        sys.stdout.write("".join(_plain(r) for r in rows))
        return
    table = Table(title=f"{len(rows)} canonical signals", show_lines=promql)
    table.add_column("signal", no_wrap=True)
    for col in ("unit", "bad", "exporters", "description"):
        table.add_column(col, overflow="fold")
    for r in rows:
        desc = r["description"]
        if promql:
            desc += "".join(f"\n[dim]{p['family']}:[/] {p['expr']}" for p in r["promql"])
        table.add_row(r["name"], r["unit"], r["bad"], ", ".join(r["exporters"]) or "-", desc)
    console.print(table)


def _plain(row: dict[str, Any]) -> str:
    """One signal as plain lines: what it is, then each mapping's PromQL whole on its own line."""
    from infersight.report.textsafe import clean

    who = ", ".join(row["exporters"]) or "-"
    head = f"{row['name']} ({row['unit']}; bad: {row['bad']}; {who}): {row['description']}"
    lines = [clean(head, one_line=True)]
    lines += [clean(f"  {p['family']}: {p['expr']}", one_line=True) for p in row.get("promql", ())]
    return "\n".join(lines) + "\n"


def exporters(
    fmt: FormatOpt = "table", as_json: JsonAliasOpt = False, mappings: MappingsOpt = None
) -> None:
    """List the exporter families infersight maps, how it recognises them, what they cover."""
    as_json = wants_json(fmt, as_json)
    catalog = load_catalog(mappings or [])
    rows: list[dict[str, Any]] = [
        {
            "family": f.name,
            "title": f.title,
            "priority": f.priority,
            "detected_by": list(f.detect),
            "signals": f.signals,
            "source": f.source,
            "checked": f.checked,
            "notes": f.notes,
            "file": f.path,
        }
        for f in catalog.ordered()
    ]
    if as_json:
        print_json(rows)
        return
    table = Table(title=f"{len(rows)} exporter families (preferred first)")
    table.add_column("family", no_wrap=True)
    for col in ("title", "detected by", "signals"):
        table.add_column(col, overflow="fold")
    for r in rows:
        table.add_row(r["family"], r["title"], ", ".join(r["detected_by"]), str(len(r["signals"])))
    console.print(table)
