"""`infersight bench accuracy`: the scenario suite as a benchmark of the diagnosis."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from infersight.cli.common import (
    EXIT_USAGE,
    FormatOpt,
    JsonAliasOpt,
    console,
    fail,
    print_json,
    progress_bar,
    wants_json,
)

app = typer.Typer(help="Measure infersight itself.", no_args_is_help=True)


@app.command("accuracy")
def accuracy(
    seeds: Annotated[int, typer.Option("--seeds", min=1, help="Seeds per scenario.")] = 5,
    first_seed: Annotated[
        int,
        typer.Option(
            "--first-seed", min=0, help="Start at this seed (the benchmark's hold-out: 75–79)."
        ),
    ] = 0,
    dialects: Annotated[
        str, typer.Option("--dialects", help="Comma-separated: vllm,triton,tgi,native.")
    ] = "vllm,triton,tgi,native",
    scenarios: Annotated[
        str | None, typer.Option("--scenarios", help="Comma-separated subset (default: all).")
    ] = None,
    update: Annotated[
        Path | None,
        typer.Option("--update", help="Also write the result into this benchmarks page."),
    ] = None,
    fmt: FormatOpt = "table",
    as_json: JsonAliasOpt = False,
) -> None:
    """Every scenario × seeds × dialects: AC@1, AC@3, and root causes claimed on healthy days.

    Each case is simulated, exposed in an exporter dialect, mapped back through the catalog and
    diagnosed, as a user's data would be. Example: infersight bench accuracy --seeds 1
    """
    as_json = wants_json(fmt, as_json)
    from infersight.benchdoc import write_section
    from infersight.lab.evaluate.accuracy import run_accuracy

    wanted = [d.strip() for d in dialects.split(",") if d.strip()]
    if not wanted:
        fail("--dialects is empty", EXIT_USAGE)
    subset = [s.strip() for s in scenarios.split(",")] if scenarios else None
    with progress_bar("diagnosing scenarios", enabled=not as_json) as update_bar:
        report = run_accuracy(
            seeds=seeds,
            dialects=wanted,
            scenarios=subset,
            progress=lambda _label, fraction: update_bar(int(fraction * 1000), 1000),
            first_seed=first_seed,
        )
    body = report.to_markdown()
    if update is not None:
        command = (
            f"infersight bench accuracy --seeds {seeds} --first-seed {first_seed} "
            f"--dialects {','.join(wanted)}"
        )
        write_section(
            "accuracy", "Diagnostic accuracy over the scenario suite", command, body, update
        )
    if as_json:
        scenario_names = sorted({c.scenario for c in report.faulty()})
        print_json(
            {
                "ac1": report.ac(1),
                "ac3": report.ac(3),
                "false_root_rate": report.false_root_rate(),
                "scenarios": {
                    s: {"ac1": report.ac(1, s), "ac3": report.ac(3, s)} for s in scenario_names
                },
            }
        )
    else:
        console.print(body, markup=False, highlight=False)
