"""`infersight lab up|down|status|fault|load`: the live lab of real processes."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from infersight.cli.common import (
    EXIT_FINDINGS,
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

if TYPE_CHECKING:
    from infersight.lab.engine import Engine

DirOpt = Annotated[
    Path, typer.Option("--dir", help="The lab's folder: pid files, logs, configs, ground truth.")
]
DEFAULT_DIR = Path("lab-live")
ENGINES = ("standin", "vllm")


def _errors() -> tuple[type[Exception], ...]:
    from infersight.lab.live.procs import LabError
    from infersight.lab.live.servers import ServerUnavailable
    from infersight.safe_write import OutputError

    return (LabError, ServerUnavailable, OutputError)


def _engine(kind: str, where: Path | None, quiet: bool) -> Engine | None:
    """The real engine asked for, or None: the stand-in (said in one line when the engine
    asked for is not installed)."""
    from infersight.lab.engine import EngineUnavailable, find

    if kind == "standin":
        return None
    try:
        return find(where)
    except EngineUnavailable as exc:
        if not quiet:
            err_console.print(f"[yellow]{markup_safe(exc)}; running the GPU stand-in instead[/]")
        return None


def up(
    replicas: Annotated[int, typer.Option("--replicas", min=1, max=8)] = 3,
    engine: Annotated[
        str,
        typer.Option(
            "--engine",
            metavar="standin|vllm",
            help="What serves the model: the GPU stand-in, or real vLLM processes (made once "
            "by `infersight lab engine setup`; about 2.7 GB of memory each).",
        ),
    ] = "standin",
    engine_dir: Annotated[
        Path | None,
        typer.Option(
            "--engine-dir", help="Where `lab engine setup` put the engine.", show_default=False
        ),
    ] = None,
    api_cpus: Annotated[
        float,
        typer.Option(
            "--api-cpus",
            min=0.01,
            max=256,
            help="The API's container CPU limit (a cgroup CFS quota; needs root). The default "
            "never binds; 0.1 binds at 6 requests/s, so that `lab fault api-cpu-limit` (the "
            "limit halved) throttles it.",
        ),
    ] = 1.0,
    lab_dir: DirOpt = DEFAULT_DIR,
    fmt: FormatOpt = "table",
    as_json: JsonAliasOpt = False,
) -> None:
    """Start the live lab: HAProxy, the API, Redis + exporter, vector search, the model's
    replicas (GPU stand-ins, or real vLLM engines each with a modelled card), node_exporter
    and Prometheus, each a process on a loopback port.

    Example: infersight lab up --replicas 3 --dir lab && infersight lab status --dir lab
    """
    as_json = wants_json(fmt, as_json)
    from infersight.lab.live import stack

    if engine not in ENGINES:
        fail(f"--engine must be one of {', '.join(ENGINES)}, not {engine!r}", EXIT_USAGE)
    real = _engine(engine, engine_dir, as_json)
    try:
        lab = stack.up(
            lab_dir,
            replicas,
            progress=lambda m: (
                None if as_json else err_console.print(f"[dim]· {markup_safe(m)}[/]")
            ),
            engine=real,
            api_cpus=api_cpus,
        )
    except _errors() as exc:
        fail(str(exc))
    if as_json:
        print_json(
            {
                "dir": str(lab_dir),
                "engine": lab.engine,
                "gateway": lab.gateway_url,
                "prometheus": lab.prometheus_url,
            }
        )
        return
    console.print(
        f"lab up in {markup_safe(lab_dir)} ({markup_safe(lab.engine)}): gateway "
        f"{lab.gateway_url}, Prometheus {lab.prometheus_url}\n{markup_safe(lab.note)}.\n"
        f"Try: infersight lab load --dir {markup_safe(lab_dir)} --rate 8 --duration 2m"
    )


def down(
    lab_dir: DirOpt = DEFAULT_DIR, fmt: FormatOpt = "table", as_json: JsonAliasOpt = False
) -> None:
    """Stop every process the lab started (and nothing else); no process and no port is left."""
    as_json = wants_json(fmt, as_json)
    from infersight.lab.live import stack

    try:
        stopped = stack.down(lab_dir)
    except _errors() as exc:
        fail(str(exc))
    if as_json:
        print_json({"stopped": stopped})
        return
    console.print(f"stopped {len(stopped)} processes: {markup_safe(', '.join(stopped) or '-')}")


def status(
    lab_dir: DirOpt = DEFAULT_DIR, fmt: FormatOpt = "table", as_json: JsonAliasOpt = False
) -> None:
    """Each part: its port, whether it is alive and healthy, its metrics URL."""
    as_json = wants_json(fmt, as_json)
    from infersight.lab.live import faults, stack

    try:
        rows = stack.status(lab_dir)
        lab = stack.Lab.load(lab_dir)
    except _errors() as exc:
        fail(str(exc))
    active = faults.active(lab)
    if as_json:
        print_json(
            {
                "engine": lab.engine,
                "gateway": lab.gateway_url,
                "prometheus": lab.prometheus_url,
                "parts": [r.to_dict() for r in rows],
                "faults": active,
            }
        )
    else:
        table = Table(title=f"live lab in {markup_safe(lab_dir)}")
        for col in ("part", "kind", "port", "alive", "healthy", "metrics"):
            table.add_column(col, overflow="fold")
        for r in rows:
            mark = "" if not r.note else " *"
            table.add_row(
                r.name + mark,
                r.kind,
                str(r.port),
                "yes" if r.alive else "[red]no[/]",
                "yes" if r.healthy else "[red]no[/]",
                r.metrics or "-",
            )
        console.print(table)
        console.print(f"* {markup_safe(lab.note)}")
        console.print(
            f"engine {markup_safe(lab.engine)}   gateway {lab.gateway_url}   "
            f"Prometheus {lab.prometheus_url}"
        )
        for a in active:
            console.print(
                f"[yellow]fault[/] {markup_safe(a['fault'])} on {markup_safe(a['target'])}"
            )
    if not all(r.healthy for r in rows):
        raise typer.Exit(EXIT_FINDINGS)


def fault(
    name: Annotated[str, typer.Argument(help="A fault (see --help), or `clear`.")],
    replica: Annotated[int, typer.Option("--replica", min=0, help="Which replica.")] = 0,
    duration: Annotated[
        str | None,
        typer.Option("--for", help="Clear it by itself after this long (10m).", metavar="DURATION"),
    ] = None,
    lab_dir: DirOpt = DEFAULT_DIR,
    fmt: FormatOpt = "table",
    as_json: JsonAliasOpt = False,
) -> None:
    """Inject a fault into the running lab (or `clear` them all); ground truth goes to
    DIR/faults/truth.jsonl.

    Faults: api-pool-shrink, api-gc-pressure, batch-delay, replica-kill, redis-maxmemory,
    link-slow, link-lossy, vector-out-of-ram, cpu-hog, disk-pressure, gpu-clock-drop, gpu-xid,
    gpu-vram-leak (the gpu-* faults change the modelled card); with a real engine (`lab up
    --engine vllm`): engine-kv-pressure, engine-seqs-cap, engine-admission-limit,
    engine-template-change, engine-restart, engine-hang, engine-cpu-limit. See docs/lab.md.
    """
    as_json = wants_json(fmt, as_json)
    from infersight.lab.live import faults, stack
    from infersight.timeparse import parse_duration

    seconds = None
    if duration is not None:
        try:
            seconds = parse_duration(duration)
        except ValueError as exc:
            fail(f"--for: {exc}", EXIT_USAGE)
    if name != "clear" and name not in faults.FAULTS:
        fail(
            f"unknown fault {name!r}; choose one of {', '.join(faults.FAULTS)} or clear", EXIT_USAGE
        )
    try:
        lab = stack.Lab.load(lab_dir)
        out = faults.clear(lab) if name == "clear" else [faults.inject(lab, name, replica, seconds)]
    except _errors() as exc:
        fail(str(exc))
    if as_json:
        print_json(out)
        return
    for e in out:
        console.print(f"{e['event']}: {markup_safe(e['fault'])} on {markup_safe(e['target'])}")
    if not out:
        console.print("no fault was active")


def load(
    rate: Annotated[float, typer.Option("--rate", help="Requests per second (open loop).")] = 8.0,
    duration: Annotated[
        str, typer.Option("--duration", help="How long (2m, 1h).", metavar="DURATION")
    ] = "2m",
    lab_dir: DirOpt = DEFAULT_DIR,
    fmt: FormatOpt = "table",
    as_json: JsonAliasOpt = False,
) -> None:
    """Steady open-loop load through the lab's gateway (loopback only, bounded)."""
    as_json = wants_json(fmt, as_json)
    from infersight.lab.live import stack
    from infersight.lab.live.load import run_load
    from infersight.timeparse import parse_duration

    try:
        seconds = parse_duration(duration)
    except ValueError as exc:
        fail(f"--duration: {exc}", EXIT_USAGE)
    try:
        lab = stack.Lab.load(lab_dir)
    except _errors() as exc:
        fail(str(exc))
    try:
        res = asyncio.run(run_load(lab.gateway_url, rate, seconds))
    except ValueError as exc:
        fail(str(exc), EXIT_USAGE)
    summary = {"sent": res.sent, "ok": res.ok, "failed": res.failed, "skipped": res.skipped}
    if as_json:
        print_json(summary)
    else:
        console.print(", ".join(f"{k} {v}" for k, v in summary.items()))


def register(app: typer.Typer) -> None:
    """Add the live lab's commands to the `lab` group."""
    app.command("up")(up)
    app.command("down")(down)
    app.command("status")(status)
    app.command("fault")(fault)
    app.command("load")(load)
