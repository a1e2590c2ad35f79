"""`infersight capacity batch|sweep|concurrency|vram`: the settings to use, from evidence
(seed §3.1–§3.3). Thin: parse, call `infersight.capacity`, render."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from infersight.cli.capacity_vram_cmd import vram
from infersight.cli.common import (
    EXIT_CANNOT_JUDGE,
    EXIT_USAGE,
    FormatOpt,
    JsonAliasOpt,
    console,
    err_console,
    fail,
    markup_safe,
    print_json,
    progress_bar,
    wants_json,
)

if TYPE_CHECKING:
    from infersight.capacity import BatchAdvice, Sweep

app = typer.Typer(
    help="Capacity settings from evidence: max batch size from a load test's knee (§3.1), "
    "worker pool, queue bound and max wait from V/M (§3.3), VRAM headroom from history (§3.2).",
    no_args_is_help=True,
)


def _ms(v: float | None) -> str:
    return "—" if v is None else f"{v * 1000:.1f} ms"


def _levels(text: str, flag: str) -> list[int]:
    try:
        levels = [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        fail(f"{flag} {text!r}: give integers separated by commas, e.g. 1,2,4,8", EXIT_USAGE)
    if len(levels) < 3 or any(v < 1 for v in levels) or levels != sorted(set(levels)):
        fail(f"{flag} {text!r}: at least 3 distinct positive steps, increasing", EXIT_USAGE)
    return levels


def _write_outputs(
    sweep: Sweep, advice: BatchAdvice, png_path: Path | None, html: Path | None
) -> None:
    from infersight.capacity.html import html_report
    from infersight.capacity.plot import png
    from infersight.safe_write import check_output, write_bytes, write_text

    for path in (png_path, html):
        if path is not None:
            check_output(path)
    if png_path is not None:
        write_bytes(png_path, png(sweep, advice))
    if html is not None:
        title = f"Capacity: the {advice.name} from the knee"
        write_text(html, html_report(sweep, advice, title))


@app.command("batch")
def batch(
    results: Annotated[Path, typer.Argument(help="A load test's results CSV.")],
    input_format: Annotated[
        str | None,
        typer.Option(
            "--input-format",
            help="plain, perf_analyzer, model_analyzer, locust or vllm (default: from the header).",
        ),
    ] = None,
    config: Annotated[
        str | None,
        typer.Option("--config", help="Model Analyzer: the model config to read (its path)."),
    ] = None,
    margin: Annotated[
        float | None,
        typer.Option(
            "--margin", help="Share under the knee (default 0.2, seed §3.1).", min=0.0, max=0.95
        ),
    ] = None,
    png_out: Annotated[
        Path | None, typer.Option("--png", help="Write the plot here (PNG).")
    ] = None,
    html_out: Annotated[
        Path | None, typer.Option("--html", help="Write the HTML report here (plot and table).")
    ] = None,
    fmt: FormatOpt = "table",
    as_json: JsonAliasOpt = False,
) -> None:
    """The knee of a load test and the max batch size (or concurrency) to set: about 20% under
    the knee, rounded down (seed §3.1: a knee at 32 gives 24–28).

    Exit 0 with a recommendation, 3 when the curve has no knee (sweep further).

    Examples:
      infersight capacity batch perf.csv --png knee.png --html knee.html
      infersight capacity batch metrics-model-inference.csv --config resnet_config_4
      infersight capacity batch r.csv   (r.csv from `capacity sweep`)
    """
    as_json = wants_json(fmt, as_json)
    from infersight.capacity import DEFAULT_CONFIG, ResultsError, advise
    from infersight.capacity.formats import read_results

    cfg = (
        DEFAULT_CONFIG
        if margin is None
        else DEFAULT_CONFIG.model_copy(update={"batch_margin": margin})
    )
    from infersight.capacity.knee import KneedMissing

    try:
        sweep = read_results(results, input_format, config)
    except ResultsError as exc:
        fail(str(exc))
    try:
        advice = advise(sweep, cfg)
    except KneedMissing as exc:
        fail(str(exc))
    _write_outputs(sweep, advice, png_out, html_out)
    if as_json:
        print_json({"sweep": sweep.to_dict(), "advice": advice.to_dict()})
    else:
        table = Table(title=f"{markup_safe(results)} ({sweep.source})")
        for col in (sweep.axis, f"throughput ({sweep.throughput_unit})", "smoothed", "p50", "p99"):
            table.add_column(col, justify="right")
        for p, s in zip(sweep.points, advice.knee.smoothed, strict=True):
            mark = " ← knee" if p.x == advice.knee.x else ""
            table.add_row(
                f"{p.x:g}{mark}",
                f"{p.throughput:.4g}",
                f"{s:.4g}",
                _ms(p.p("p50")),
                _ms(p.p("p99")),
            )
        console.print(table)
        console.print(markup_safe(advice.summary()), highlight=False, soft_wrap=True)
        for path in (png_out, html_out):
            if path is not None:
                err_console.print(f"wrote {markup_safe(path)}")
    if advice.setting is None:
        raise typer.Exit(EXIT_CANNOT_JUDGE)


@app.command("sweep")
def sweep_cmd(
    url: Annotated[
        str,
        typer.Argument(
            help="The endpoint: the live lab's /v1/answer?q=…, the serving example's "
            "/infer?text=…, an OpenAI-compatible /v1/embeddings or /v1/completions, or a Triton "
            "/v2/models/NAME/infer."
        ),
    ],
    out: Annotated[Path, typer.Option("--out", "-o", help="RESULTS CSV to write (plain format).")],
    batch_levels: Annotated[
        str | None, typer.Option("--batch", help="Batch sizes to step through, e.g. 1,2,4,8,16,32.")
    ] = None,
    concurrency_levels: Annotated[
        str | None, typer.Option("--concurrency", help="Requests in flight to step through.")
    ] = None,
    kind: Annotated[
        str | None, typer.Option("--kind", help="get, openai or triton (default: from the URL).")
    ] = None,
    model: Annotated[str, typer.Option("--model", help="Model name (OpenAI bodies).")] = "default",
    triton_input: Annotated[
        str, typer.Option("--triton-input", help="Triton input as NAME:DTYPE:DIMS.")
    ] = "INPUT0:FP32:16",
    step: Annotated[str, typer.Option("--step", help="Load per step.", metavar="DURATION")] = "5s",
    warmup: Annotated[
        str, typer.Option("--warmup", help="Unmeasured start of each step.", metavar="DURATION")
    ] = "1s",
    in_flight: Annotated[
        int, typer.Option("--in-flight", help="Batch sweeps: requests kept in flight.", min=1)
    ] = 1,
    overwrite: Annotated[bool, typer.Option("--overwrite", help="Replace RESULTS.")] = False,
    fmt: FormatOpt = "table",
    as_json: JsonAliasOpt = False,
) -> None:
    """Drive an endpoint through increasing batch sizes or concurrency with an open-loop
    generator (requests leave on schedule whatever the server does) and write RESULTS for
    `capacity batch`.

    Examples:
      infersight capacity sweep 'http://127.0.0.1:8000/infer?text=hi'
        --concurrency 1,2,4,8,16,32 -o pool.csv
      infersight capacity sweep http://gpu-1:8000/v1/embeddings
        --batch 1,2,4,8,16,32,64 -o batch.csv
      infersight capacity sweep http://triton:8000/v2/models/resnet/infer
        --triton-input input:FP32:3x224x224 --batch 1,2,4,8 -o r.csv
    """
    as_json = wants_json(fmt, as_json)
    from infersight.capacity import DEFAULT_CONFIG, advise
    from infersight.capacity.results import Axis, to_plain_csv
    from infersight.capacity.sweep import SweepError, sweep
    from infersight.capacity.targets import (
        KINDS,
        Target,
        check_url,
        guess_kind,
        parse_triton_input,
    )
    from infersight.safe_write import check_output, write_text
    from infersight.timeparse import parse_duration

    if (batch_levels is None) == (concurrency_levels is None):
        fail("give exactly one of --batch or --concurrency", EXIT_USAGE)
    try:
        check_url(url)
        spec = parse_triton_input(triton_input)
        step_s, warm_s = parse_duration(step), parse_duration(warmup)
    except ValueError as exc:
        fail(str(exc), EXIT_USAGE)
    if warm_s >= step_s:
        fail(f"--warmup {warmup} must be shorter than --step {step}", EXIT_USAGE)
    k = kind or guess_kind(url)
    if k not in KINDS:
        fail(f"--kind {k!r}: choose get, openai or triton", EXIT_USAGE)
    target = Target(url, k, model, triton_input=spec)
    axis: Axis = "batch" if batch_levels is not None else "concurrency"
    levels = _levels(batch_levels or concurrency_levels or "", f"--{axis}")
    if axis == "batch" and not target.batches:
        fail(f"{url}: a {k} endpoint takes one item per request; sweep --concurrency", EXIT_USAGE)
    check_output(out, overwrite=overwrite)
    cfg = DEFAULT_CONFIG.model_copy(update={"step_seconds": step_s, "warmup_seconds": warm_s})
    try:
        with progress_bar(f"sweeping {axis}", enabled=not as_json) as update:
            result, logs = sweep(target, axis, levels, in_flight, cfg, update)
    except SweepError as exc:
        fail(str(exc))
    write_text(out, to_plain_csv(result), overwrite=overwrite)
    from infersight.capacity.knee import KneedMissing

    try:
        advice = advise(result, cfg)
    except KneedMissing as exc:
        fail(f"wrote {out}, but {exc}")
    if as_json:
        print_json(
            {
                "sweep": result.to_dict(),
                "steps": [s.to_dict() for s in logs],
                "advice": advice.to_dict(),
            }
        )
        return
    table = Table(title=f"{markup_safe(url)} ({axis})")
    for col in (
        axis,
        "rate/s",
        "sent",
        "errors",
        f"throughput ({result.throughput_unit})",
        "p50",
        "p99",
        "send lag p99",
    ):
        table.add_column(col, justify="right")
    for p, log in zip(result.points, logs, strict=True):
        lag = log.to_dict()["lag_p99_s"]
        table.add_row(
            f"{p.x:g}", f"{log.rate:.1f}", str(log.sent), str(p.errors), f"{p.throughput:.4g}",
            _ms(p.p("p50")), _ms(p.p("p99")), _ms(lag),
        )  # fmt: skip
    console.print(table)
    console.print(markup_safe(advice.summary()), highlight=False, soft_wrap=True)
    err_console.print(
        f"wrote {markup_safe(out)}; next: infersight capacity batch {markup_safe(out)}"
    )


@app.command("concurrency")
def concurrency(
    vram: Annotated[str, typer.Option("--vram", help="The card's VRAM, e.g. 80GiB.")],
    per_batch_peak: Annotated[
        str, typer.Option("--per-batch-peak", help="M: peak VRAM one batch adds, e.g. 6GiB.")
    ],
    batch_latency: Annotated[
        str,
        typer.Option(
            "--batch-latency",
            help="L: one batch's time on the GPU, e.g. 120ms.",
            metavar="DURATION",
        ),
    ],
    batch_size: Annotated[
        int, typer.Option("--batch-size", help="b: requests in one batch.", min=1)
    ] = 1,
    target_p99: Annotated[
        str | None,
        typer.Option("--target-p99", help="The p99 to hold, e.g. 500ms.", metavar="DURATION"),
    ] = None,
    reserved: Annotated[
        str, typer.Option("--reserved", help="VRAM held whatever the load (weights, runtime).")
    ] = "0",
    headroom: Annotated[
        float | None,
        typer.Option(
            "--headroom",
            help="Share of VRAM kept free (default 0.2, seed §3.2).",
            min=0.0,
            max=0.95,
        ),
    ] = None,
    fmt: FormatOpt = "table",
    as_json: JsonAliasOpt = False,
) -> None:
    """V/M, requests per second, the worker pool, the queue bound and the max wait that follow
    from the GPU (seed §3.3), each with its arithmetic and seed section.

    Example:
      infersight capacity concurrency --vram 80GiB --reserved 16GiB
        --per-batch-peak 6GiB --batch-latency 120ms --batch-size 8 --target-p99 500ms
    """
    as_json = wants_json(fmt, as_json)
    from infersight.capacity import plan_pool
    from infersight.limits import LimitError, parse_size
    from infersight.timeparse import parse_duration

    try:
        card, m = parse_size(vram), parse_size(per_batch_peak)
        held = 0 if reserved.strip() in ("0", "") else parse_size(reserved)
        lat = parse_duration(batch_latency)
        p99 = parse_duration(target_p99) if target_p99 is not None else None
    except (LimitError, ValueError) as exc:
        fail(str(exc), EXIT_USAGE)
    try:
        plan = plan_pool(card, m, lat, batch_size, p99, held, headroom)
    except ValueError as exc:
        fail(str(exc), EXIT_USAGE)
    if as_json:
        print_json(plan.to_dict())
        return
    table = Table(title="Worker pool from GPU concurrency")
    for col in ("figure", "value", "arithmetic", "seed"):
        table.add_column(col)
    for f in plan.figures:
        value = (
            f"{f.value / 2**30:.2f} GiB" if f.unit == "bytes"
            else _ms(f.value) if f.unit == "seconds"
            else f"{f.value:.1f}/s" if f.unit == "per_s"
            else f"{f.value:.0f}"
        )  # fmt: skip
        table.add_row(f.name, value, markup_safe(f.arithmetic), f.seed)
    console.print(table)
    for w in plan.warnings:
        err_console.print(f"[yellow]warning:[/] {markup_safe(w)}")


app.command("vram")(vram)
