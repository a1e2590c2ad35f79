"""`infersight lab scenarios|sim`: rehearse incidents on a simulated fleet."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from infersight.cli.common import (
    EXIT_USAGE,
    FormatOpt,
    JsonAliasOpt,
    console,
    err_console,
    fail,
    markup_safe,
    print_json,
    wants_json,
)

app = typer.Typer(
    help="A simulated AI inference fleet: scenarios with known root causes.",
    no_args_is_help=True,
)

DIALECT_HELP = (
    "How the run is exposed: `canonical` (the model's own signals), or an exporter dialect "
    "mapped back through the catalog as real users' data would be: vllm, triton, tgi, native; "
    "or `kubernetes`: the vLLM fleet as pods, scraped by the Prometheus Operator, with "
    "kube-state-metrics."
)


@app.command("scenarios")
def scenarios(fmt: FormatOpt = "table", as_json: JsonAliasOpt = False) -> None:
    """List the scenarios: root causes, layer, the field-guide section, what happens."""
    as_json = wants_json(fmt, as_json)
    from infersight.lab.sim.run import list_scenarios

    rows = list_scenarios()
    if as_json:
        print_json(rows)
        return
    table = Table(title=f"{len(rows)} scenarios")
    table.add_column("scenario", no_wrap=True)
    table.add_column("root causes", overflow="fold")
    table.add_column("seed §", no_wrap=True)
    table.add_column("dialects", overflow="fold")
    table.add_column("what happens", overflow="fold")
    for r in rows:
        engines = ", ".join(r["engines"]) if r["engines"] else "all"
        table.add_row(
            r["name"], ", ".join(r["roots"]) or "-", r["seed_section"], engines, r["description"]
        )
    console.print(table)


def _hours(text: str, option: str) -> float:
    """A duration option in hours: "3h", "90m", or a bare number of hours."""
    from infersight.timeparse import parse_duration

    try:
        return float(text) if text.replace(".", "", 1).isdigit() else parse_duration(text) / 3600
    except ValueError as exc:
        fail(f"{option}: {exc}", EXIT_USAGE)


@app.command("sim")
def sim(
    scenario: Annotated[str, typer.Option("--scenario", "-s", help="See `lab scenarios`.")],
    out: Annotated[
        Path,
        typer.Option(
            "--out",
            "-o",
            help="A bundle (directory or .tar.gz), or OpenMetrics text (.om) for promtool "
            "backfill.",
        ),
    ],
    duration: Annotated[
        str,
        typer.Option(
            "--duration", help="Time simulated after the history: 3h, 90m.", metavar="DURATION"
        ),
    ] = "3h",
    hours: Annotated[
        float | None, typer.Option("--hours", hidden=True, help="The old --duration, in hours.")
    ] = None,
    history: Annotated[
        str,
        typer.Option(
            "--history",
            help="Fault-free time before it: 25h gives a day-ago baseline (a bare number is "
            "hours).",
            metavar="DURATION",
        ),
    ] = "25h",
    instances: Annotated[int, typer.Option("--instances", "-n", min=1)] = 8,
    seed: Annotated[int, typer.Option("--seed", help="Same seed, same run.")] = 0,
    dialect: Annotated[str, typer.Option("--dialect", "-d", help=DIALECT_HELP)] = "vllm",
    overwrite: Annotated[
        bool, typer.Option("--overwrite", help="Replace an existing output.")
    ] = False,
    fmt: FormatOpt = "table",
    as_json: JsonAliasOpt = False,
) -> None:
    """Simulate a scenario and write it as an evidence bundle or as OpenMetrics text.

    Examples:

      infersight lab sim -s incident_0217 -o 0217.tar.gz

      infersight lab sim -s gpu_thermal_throttling -d triton -o hot.om   # then promtool backfill
    """
    as_json = wants_json(fmt, as_json)
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    from infersight.bundle import BundleError
    from infersight.lab.sim.outputs import run_cli
    from infersight.lab.sim.scenarios import UnknownScenarioError
    from infersight.safe_write import OutputError

    hours_f = _hours(duration, "--duration") if hours is None else hours
    history_h = _hours(history, "--history")
    with Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        TextColumn("{task.percentage:>3.0f}%"),
        TimeElapsedColumn(),
        console=err_console,
        transient=True,
        disable=as_json,
    ) as bar:
        task = bar.add_task(f"simulating {markup_safe(scenario)}", total=100)

        def progress(stage: str, frac: float) -> None:
            if stage == "writing":
                bar.update(task, description=f"writing {markup_safe(out)}")
            bar.update(task, completed=int(frac * 100))

        def announce(message: str) -> None:  # the size, before the file is written
            if not as_json:
                bar.console.print(f"[dim]· {markup_safe(message)}[/]", highlight=False)

        try:
            summary = run_cli(
                scenario,
                hours_f,
                instances,
                seed,
                dialect,
                out,
                progress=progress,
                overwrite=overwrite,
                history_h=history_h,
                announce=announce,
            )
        except (UnknownScenarioError, ValueError, FileExistsError) as exc:
            fail(str(exc).strip("'\""), EXIT_USAGE)
        except (OutputError, BundleError) as exc:
            fail(str(exc), EXIT_USAGE)
    if as_json:
        print_json(summary)
        return
    truth = summary["truth"]
    console.print(
        f"wrote [bold]{markup_safe(summary['out'])}[/]: {markup_safe(scenario)}, "
        f"{instances} instances, seed {seed}, "
        f"{summary['samples']:,} samples; roots: {', '.join(truth['roots']) or 'none (healthy)'}"
    )
    err_console.print(f"the ground truth is in {markup_safe(summary['truth_file'])}")


def demo(
    out_dir: Annotated[
        Path, typer.Option("--out-dir", help="Where the bundle and the HTML report go.")
    ] = Path("out"),
    seed: Annotated[int, typer.Option("--seed", help="Another seed, another night.")] = 217,
    dialect: Annotated[str, typer.Option("--dialect", "-d", help=DIALECT_HELP)] = "vllm",
    full: Annotated[
        bool, typer.Option("--full", "-v", help="The whole report, not only the first screen.")
    ] = False,
) -> None:
    """The 02:17 incident, simulated with a day of history and diagnosed; no server needed.

    P99 climbs from a few hundred ms to seconds at 02:17. infersight freezes the scene into an
    evidence bundle, walks the layers, and names the root causes with the chain and evidence.
    """
    from infersight.bundle import BundleError
    from infersight.demo import check_out_dir, run_demo
    from infersight.report import render_terminal
    from infersight.safe_write import OutputError

    try:
        check_out_dir(out_dir)
    except (OutputError, BundleError) as exc:
        fail(f"--out-dir: {exc}", EXIT_USAGE)
    res = run_demo(
        out_dir, seed, dialect, step=lambda msg: err_console.print(f"[dim]· {markup_safe(msg)}[/]")
    )
    render_terminal(res.diagnosis, console, full=full)
    console.print(
        f"\nHTML report: [bold]{markup_safe(res.html)}[/]   "
        f"evidence bundle: [bold]{markup_safe(res.bundle)}[/]\n"
        f"The simulator's ground truth: {', '.join(res.truth_roots)}. Try next:\n"
        f"  infersight diagnose {markup_safe(res.bundle)} --full"
    )
