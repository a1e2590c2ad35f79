"""`infersight stress run|compare`: worst-case load profiles, compared run to run (seed §6.3)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from infersight.cli.common import (
    EXIT_FINDINGS,
    EXIT_USAGE,
    FormatOpt,
    JsonAliasOpt,
    cannot_judge,
    console,
    err_console,
    fail,
    markup_safe,
    print_json,
    wants_json,
)

app = typer.Typer(
    help="Worst-case stress tests (spike, ramp, slow dependency, instance loss, soak) with "
    "Locust, compared run to run.",
    no_args_is_help=True,
)


def _ms(v: float | None) -> str:
    return "-" if v is None else f"{v * 1000:.0f} ms"


@app.command("run")
def run(
    url: Annotated[
        str, typer.Argument(help="The service (loopback only), e.g. the lab's gateway.")
    ],
    profile: Annotated[
        str, typer.Option("--profile", help="spike | ramp | slow-dependency | instance-loss | soak")
    ],
    out: Annotated[Path, typer.Option("--out", "-o", help="The results file (JSON).")],
    users: Annotated[
        int, typer.Option("--users", min=1, help="Peak paced users (1 req/s each).")
    ] = 10,
    duration: Annotated[
        str, typer.Option("--duration", help="Whole run: 5m, 90s.", metavar="DURATION")
    ] = "5m",
    slo_p99: Annotated[
        str,
        typer.Option(
            "--slo-p99", help="SLO: P99 at most: 1s, 500ms (bare: seconds).", metavar="DURATION"
        ),
    ] = "1s",
    slo_errors: Annotated[
        float, typer.Option("--slo-errors", help="SLO: error ratio at most.")
    ] = 0.01,
    lab_dir: Annotated[
        Path | None,
        typer.Option("--lab", help="A live lab: inject the profile's fault there during its step."),
    ] = None,
    prometheus: Annotated[
        str | None,
        typer.Option("--prometheus", "-p", help="Diagnose the run's window on this server."),
    ] = None,
    overwrite: Annotated[bool, typer.Option("--overwrite")] = False,
    fmt: FormatOpt = "table",
    as_json: JsonAliasOpt = False,
) -> None:
    """Run a load profile with Locust (headless, as a library) and write the results.

    Exit 1 when the SLO is broken or every request failed (the results are written either way).

    Example: infersight stress run --profile spike --users 12 --duration 3m -o spike.json
    http://127.0.0.1:8080
    """
    as_json = wants_json(fmt, as_json)
    import json

    from infersight.lab.live.procs import LabError
    from infersight.safe_write import OutputError, check_output, write_text
    from infersight.stress.runner import Slo, check, failed
    from infersight.stress.runner import run as run_profile
    from infersight.timeparse import parse_duration

    try:
        slo_p99_s = parse_duration(slo_p99)
    except ValueError as exc:
        fail(f"--slo-p99: {exc}", EXIT_USAGE)
    try:
        seconds = parse_duration(duration)
        check_output(out, overwrite=overwrite)
    except ValueError as exc:
        fail(f"--duration: {exc}", EXIT_USAGE)
    except OutputError as exc:
        fail(str(exc), EXIT_USAGE)
    try:
        check(url, profile, users, seconds)
    except ValueError as exc:
        fail(str(exc), EXIT_USAGE)
    if not as_json:
        err_console.print(f"[dim]· {markup_safe(profile)} for {duration}, up to {users} users[/]")
    try:
        result = run_profile(
            url, profile, users, seconds, Slo(slo_p99_s, slo_errors), lab_dir, prometheus
        )
    except ValueError as exc:
        fail(str(exc), EXIT_USAGE)
    except (RuntimeError, LabError) as exc:
        fail(str(exc))
    try:
        write_text(out, json.dumps(result, indent=2) + "\n", overwrite=overwrite)
    except OutputError as exc:
        fail(str(exc))
    finding = failed(result)
    if not result["total"]["requests"]:  # nothing was measured: no verdict on the SLO either
        if as_json:
            print_json(result)
        cannot_judge(finding or "no request was sent")
    if as_json:
        print_json(result)
        if finding:
            raise typer.Exit(EXIT_FINDINGS)
        return
    table = Table(title=f"{profile}: {markup_safe(url)}")
    for col in ("step", "users", "req/s", "P50", "P99", "P99.9", "errors", "SLO"):
        table.add_column(col)
    for r in [*result["steps"], result["total"]]:
        table.add_row(
            r["name"] + (f" ({r['fault']})" if r.get("fault") else ""),
            str(r["users"]),
            f"{r['throughput']:.1f}",
            _ms(r["p50_s"]),
            _ms(r["p99_s"]),
            _ms(r["p999_s"]),
            f"{r['errors']} ({r['error_ratio']:.1%})",
            "ok" if r["slo_ok"] else "[red]broken[/]",
        )
    console.print(table)
    sat = result["saturation_step"]
    console.print(f"saturation: {'none within the profile' if sat is None else markup_safe(sat)}")
    if "diagnosis" in result:
        d = result["diagnosis"]
        console.print(f"diagnosis: {markup_safe(', '.join(d.get('roots') or []) or d)}")
    console.print(f"results: {markup_safe(out)}")
    if finding:
        err_console.print(f"[red]{markup_safe(finding)}[/]")
        raise typer.Exit(EXIT_FINDINGS)


@app.command("compare")
def compare(
    run_a: Annotated[Path, typer.Argument(help="The earlier run (results JSON).")],
    run_b: Annotated[Path, typer.Argument(help="The later run.")],
    band_from: Annotated[
        list[Path] | None,
        typer.Option(
            "--band-from",
            help="Repeated clean runs of the same profile (two or more): the noise band.",
        ),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option("--out", "-o", help="Also write the comparison as HTML with plots."),
    ] = None,
    fmt: FormatOpt = "table",
    as_json: JsonAliasOpt = False,
) -> None:
    """Side by side, with a verdict: stronger, weaker or same (beyond the noise band).

    Exit 1 when B is weaker. Example: infersight stress compare last.json now.json
    --band-from clean1.json --band-from clean2.json
    """
    as_json = wants_json(fmt, as_json)
    from infersight.stress.compare import RunFileError, load_run, noise_band
    from infersight.stress.compare import compare as compare_runs

    try:
        a, b = load_run(run_a), load_run(run_b)
        band = noise_band([load_run(p) for p in band_from]) if band_from else None
        result = compare_runs(a, b, band)
    except RunFileError as exc:  # a file that is not a run: bad input, nothing to compare
        fail(str(exc))
    if out is not None:
        from infersight.safe_write import OutputError, write_text
        from infersight.stress.html import render

        try:
            write_text(out, render(result, str(run_a), str(run_b)))
        except OutputError as exc:
            fail(str(exc), EXIT_USAGE)
    if as_json:
        print_json(result.to_dict())
    else:
        table = Table(title=f"{markup_safe(run_a)} → {markup_safe(run_b)}")
        for col in (
            "step",
            "req/s A",
            "req/s B",
            "P99 A",
            "P99 B",
            "P99 Δ",
            "errors A",
            "errors B",
        ):
            table.add_column(col)
        for r in result.rows:
            d = r["p99_change"]
            table.add_row(
                r["step"],
                f"{r['throughput_a']:.1f}",
                f"{r['throughput_b']:.1f}",
                _ms(r["p99_s_a"]),
                _ms(r["p99_s_b"]),
                "-" if d is None else f"{d:+.0%}",
                f"{r['error_ratio_a']:.1%}",
                f"{r['error_ratio_b']:.1%}",
            )
        console.print(table)
        console.print(
            f"verdict: [bold]{result.verdict}[/]: {markup_safe('; '.join(result.reasons))}"
        )
    if result.verdict == "weaker":
        raise typer.Exit(EXIT_FINDINGS)
