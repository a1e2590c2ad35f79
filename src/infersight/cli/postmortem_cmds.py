"""`infersight postmortem new|list|show|search|similar`: the library of past incidents."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer
from rich.table import Table

from infersight.cli.common import (
    EXIT_FINDINGS,
    FormatOpt,
    JsonAliasOpt,
    console,
    err_console,
    fail,
    markup_safe,
    print_json,
    wants_json,
)

if TYPE_CHECKING:
    from infersight.postmortem import Problem, Scan

app = typer.Typer(
    help=(
        "Blameless postmortems from a diagnosis, kept as Markdown in a folder (git-friendly); "
        "search the history first.\n\n"
        "The library folder is --library DIR, or $INFERSIGHT_HISTORY, or ./postmortems."
    ),
    no_args_is_help=True,
)

#: the library folder every command and `diagnose --history` default to
HISTORY_ENV = "INFERSIGHT_HISTORY"
DEFAULT_LIBRARY = Path("postmortems")

LibraryOpt = Annotated[
    Path,
    typer.Option(
        "--library",
        "-l",
        help="The postmortem folder (default: $INFERSIGHT_HISTORY, else ./postmortems).",
        envvar=HISTORY_ENV,
        metavar="DIR",
    ),
]
LimitOpt = Annotated[int, typer.Option("--limit", "-n", min=1, help="Rows to print at most.")]


def _warn(problems: Sequence[Problem]) -> None:
    """One line per damaged file, on stderr; the rest were read."""
    for p in problems:
        err_console.print(f"[yellow]skipped[/] {markup_safe(p)}", highlight=False, soft_wrap=True)


def _library_error(exc: Exception) -> NoReturn:
    fail(str(exc))


@app.command("new")
def new(
    source: Annotated[
        Path,
        typer.Option(
            "--from",
            help="A diagnosis: the JSON report (`diagnose -o report.json`) or an evidence bundle.",
            metavar="REPORT.json|BUNDLE",
        ),
    ],
    out: Annotated[
        Path,
        typer.Option(
            "--out",
            "-o",
            help="The library folder to write into (default: $INFERSIGHT_HISTORY, else "
            "./postmortems); made if missing.",
            envvar=HISTORY_ENV,
            metavar="DIR",
        ),
    ] = DEFAULT_LIBRARY,
    services: Annotated[
        list[str] | None,
        typer.Option("--service", help="A service the incident touched; repeatable."),
    ] = None,
    audit: Annotated[
        list[Path] | None,
        typer.Option(
            "--audit",
            help='A runbook audit log (JSON Lines: {"ts", "runbook", "step", "outcome"}) whose '
            "actions join the timeline; repeatable.",
            metavar="FILE",
        ),
    ] = None,
    fmt: FormatOpt = "table",
    as_json: JsonAliasOpt = False,
) -> None:
    """Write a blameless draft from a diagnosis: front matter (id, dates, layers, root causes,
    signals, severity, status) and a body with the timeline, the symptoms and their figures,
    what was ruled out and why, the root causes and their chain, remediation, and action items
    with owners left blank. Never overwrites: a taken id gets the next suffix (-2, -3, …).

    Examples:

      infersight diagnose scene.tar.gz -o report.json; infersight postmortem new --from report.json

      infersight postmortem new --from scene.tar.gz -o ops/postmortems --service rag-api
    """
    as_json = wants_json(fmt, as_json)
    from dataclasses import replace

    from infersight.postmortem import InputError, LibraryError, load_incident, read_audit
    from infersight.postmortem import new as write_new
    from infersight.safe_write import OutputError

    try:
        incident = load_incident(source)
        extra = []
        for log in audit or []:
            actions, bad_lines = read_audit(log)
            extra += actions
            for line in bad_lines:
                err_console.print(f"[yellow]skipped[/] {markup_safe(line)}", highlight=False)
        incident = replace(incident, actions=incident.actions + tuple(extra))
        entry, damaged = write_new(incident, out, services or ())
    except (InputError, LibraryError, OutputError) as exc:
        _library_error(exc)
    _warn(damaged)
    if as_json:
        print_json({"id": entry.front.id, "path": str(entry.path), "title": entry.front.title})
        return
    console.print(f"wrote {markup_safe(entry.path)} (id {markup_safe(entry.front.id)})")
    console.print("next: fill in the blanks (_to fill in_), set severity, fixed_by and status")


def _scan(library: Path) -> Scan:
    from infersight.postmortem import LibraryError, scan

    try:
        return scan(library)
    except LibraryError as exc:
        _library_error(exc)


@app.command("list")
def list_(
    library: LibraryOpt = DEFAULT_LIBRARY,
    fmt: FormatOpt = "table",
    as_json: JsonAliasOpt = False,
) -> None:
    """Every postmortem in the library, newest first; a damaged file is named with what is
    wrong, and the rest are listed. Exit 1 when a file could not be read.

    Example: infersight postmortem list -l ops/postmortems
    """
    as_json = wants_json(fmt, as_json)
    lib = _scan(library)
    entries = sorted(lib.entries, key=lambda e: (e.front.date, e.front.id), reverse=True)
    if as_json:
        print_json(
            {
                "postmortems": [
                    {**e.front.model_dump(mode="json"), "path": str(e.path)} for e in entries
                ],
                "problems": [{"path": str(p.path), "message": p.message} for p in lib.problems],
            }
        )
    else:
        table = Table(title=f"{len(entries)} postmortems in {markup_safe(library)}")
        for col in ("id (date first)", "status", "root causes", "title"):
            table.add_column(col, no_wrap=col.startswith("id"))
        for e in entries:
            f = e.front
            table.add_row(
                markup_safe(f.id),
                f.status if f.severity == "unset" else f"{f.status}, {f.severity}",
                markup_safe(", ".join(f.root_causes) or "-"),
                markup_safe(f.title),
            )
        console.print(table)
    _warn(lib.problems)
    if lib.problems:
        raise typer.Exit(EXIT_FINDINGS)


@app.command("show")
def show(
    pid: Annotated[str, typer.Argument(help="The postmortem's id (as `list` shows it).")],
    library: LibraryOpt = DEFAULT_LIBRARY,
    fmt: FormatOpt = "table",
    as_json: JsonAliasOpt = False,
) -> None:
    """Print one postmortem (the Markdown file as written; --format json: its fields and body).

    Example: infersight postmortem show 2026-03-14-vector-db-swap
    """
    as_json = wants_json(fmt, as_json)
    lib = _scan(library)
    entry = lib.by_id(pid)
    if entry is None:
        bad = [p for p in lib.problems if p.path.stem == pid]
        if bad:
            fail(f"{bad[0]}; fix its front matter")
        fail(f"no postmortem {pid!r} in {library}; `infersight postmortem list` shows the ids")
    if as_json:
        print_json(
            {**entry.front.model_dump(mode="json"), "path": str(entry.path), "body": entry.body}
        )
        return
    from infersight import userfile

    try:
        text = userfile.read_text(entry.path)
    except userfile.UserFileError as exc:
        fail(str(exc))
    sys.stdout.write(text)


@app.command("search")
def search(
    text: Annotated[str, typer.Argument(help="Words to find (all of them; any case; stemmed).")],
    library: LibraryOpt = DEFAULT_LIBRARY,
    limit: LimitOpt = 10,
    ruled_out: Annotated[
        bool,
        typer.Option(
            "--ruled-out",
            help="Also list postmortems that hold the words only among the causes they ruled "
            "out (or the past incidents they resembled).",
        ),
    ] = False,
    fmt: FormatOpt = "table",
    as_json: JsonAliasOpt = False,
) -> None:
    """Full-text search over titles, root causes, symptoms, signals, layers, services and
    bodies (SQLite FTS5), ranked by what the incidents were: a word in the title or the root
    causes weighs most, one among the causes a draft ruled out least. Each row says where it
    matched. The index is rebuilt first when the files changed; the files stay the truth.
    Exit 0 with or without a match: a search finds, it judges nothing (docs/cli.md).

    Examples:

      infersight postmortem search "vector swap"

      infersight postmortem search cache_capacity -l ops/postmortems
    """
    as_json = wants_json(fmt, as_json)
    from infersight.postmortem import LibraryError
    from infersight.postmortem import search as run_search

    try:
        found, lib, index = run_search(library, text, None)
    except LibraryError as exc:
        _library_error(exc)
    if index.sync.note:
        err_console.print(f"[yellow]note[/] {markup_safe(index.sync.note)}", highlight=False)
    listed = [h for h in found if ruled_out or not h.ruled_out_only]
    hits, aside = listed[:limit], len(found) - len(listed)
    if as_json:
        print_json(
            {
                "hits": [h.to_dict() for h in hits],
                "ruled_out_only": aside,
                "problems": [str(p) for p in lib.problems],
            }
        )
    else:
        table = Table(title=f"{len(hits)} postmortems match {markup_safe(text)}")
        for col in ("id", "title", "matched in", "where"):
            table.add_column(col, no_wrap=col == "id")
        for h in hits:
            table.add_row(
                markup_safe(h.id), markup_safe(h.title), markup_safe(h.why), markup_safe(h.snippet)
            )
        console.print(table)
        if aside:
            console.print(
                f"{aside} more hold these words only among the causes they ruled out "
                "(--ruled-out lists them)",
                highlight=False,
            )
    _warn(lib.problems)


@app.command("similar")
def similar(
    source: Annotated[
        Path, typer.Argument(help="A diagnosis: the JSON report or an evidence bundle.")
    ],
    library: LibraryOpt = DEFAULT_LIBRARY,
    limit: LimitOpt = 10,
    min_score: Annotated[
        float | None,
        typer.Option("--min-score", min=0.0, max=1.0, help="Leave out past incidents below this."),
    ] = None,
    fmt: FormatOpt = "table",
    as_json: JsonAliasOpt = False,
) -> None:
    """The past incidents most like a diagnosis: by root causes, the signals that moved, the
    order things began in, the size of the changes and the layers, not only by words.
    Exit 0 with or without a match: a search finds, it judges nothing (docs/cli.md).

    Example: infersight postmortem similar report.json -l ops/postmortems
    """
    as_json = wants_json(fmt, as_json)
    from infersight.postmortem import InputError, load_incident
    from infersight.postmortem import similar as run_similar

    try:
        incident = load_incident(source)
    except InputError as exc:
        fail(str(exc))
    lib = _scan(library)
    matches = run_similar(incident.diagnosis, lib, min_score=min_score)[:limit]
    if as_json:
        print_json(
            {"similar": [m.to_dict() for m in matches], "problems": [str(p) for p in lib.problems]}
        )
    else:
        table = Table(title=f"{len(matches)} similar past incidents in {markup_safe(library)}")
        for col in ("score", "id", "title", "fixed by", "why"):
            table.add_column(col, no_wrap=col in ("score", "id"))
        for m in matches:
            f = m.entry.front
            table.add_row(
                f"{m.similarity.score:.2f}",
                markup_safe(f.id),
                markup_safe(f.title),
                markup_safe(f.fixed_by or "-"),
                markup_safe("; ".join(m.similarity.why)),
            )
        console.print(table)
    _warn(lib.problems)
