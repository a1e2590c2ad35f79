"""`infersight serve`: capture and diagnose when Alertmanager fires."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Annotated

import typer

from infersight.cli.common import EXIT_INPUT, EXIT_USAGE, err_console, fail, markup_safe
from infersight.frame import MetricFrame

AlertOpt = Annotated[
    Path | None,
    typer.Option(
        "--alert",
        help="An Alertmanager notification saved as JSON (webhook payload version 4): diagnose "
        "it as `infersight serve` would, at the moment it arrived (--at; default now, or a "
        "bundle's newest data) over a window reaching back past its startsAt.",
    ),
]


def alert_start(alert: Path | None) -> float | None:
    """The earliest firing startsAt of the saved notification (None without --alert)."""
    if alert is None:
        return None
    from infersight.serve.alerts import PayloadError, read_alert_file

    try:
        return read_alert_file(alert).starts_at()
    except PayloadError as exc:
        fail(f"--alert {exc}", EXIT_INPUT)


def alert_pull(starts_at: float, at: str | None, window: str) -> tuple[str, str]:
    """(--at, --window) of a live pull for an alert, as `serve` chooses them
    (`moment.alert_window`): the window ends at --at (now when not given) and reaches back past
    startsAt; --window is its least length."""
    from infersight.cli.inputs import FUTURE_SLACK_S, parse_at
    from infersight.serve.moment import alert_window
    from infersight.timeparse import iso, parse_duration, parse_time, promql_duration
    from infersight.units import format_duration

    try:
        arrived = parse_at(at) if at is not None else parse_time("now")
        length = parse_duration(window)
    except ValueError as exc:
        fail(f"--at/--window: {exc}", EXIT_USAGE)
    if arrived + FUTURE_SLACK_S < starts_at:
        fail(
            f"--at {iso(arrived)} is before the alert's startsAt {iso(starts_at)}: give the time "
            "it arrived, or leave --at out (now)",
            EXIT_USAGE,
        )
    w = alert_window(starts_at, arrived, length)
    if not w.reaches:
        fail(
            f"--alert: it started at {iso(starts_at)}, more than {format_duration(w.span_s)} "
            f"before {iso(arrived)}: give --at with the time the alert arrived",
            EXIT_USAGE,
        )
    return iso(w.at), promql_duration(w.span_s)


def alert_in_bundle(starts_at: float, frame: MetricFrame, at: float | None) -> None:
    """Refuse a bundle that ends before the alert began (it holds nothing of it); say so when
    it begins too late to hold the stretch before the alert's onset."""
    from infersight.cli.inputs import FUTURE_SLACK_S
    from infersight.serve.moment import AlertTiming
    from infersight.timeparse import iso

    moment = frame.end if at is None else at
    if starts_at > moment + FUTURE_SLACK_S:
        fail(
            f"--alert: it started at {iso(starts_at)}, after the moment diagnosed "
            f"({iso(moment)}; the bundle ends at {iso(frame.end)}): the bundle holds nothing "
            "of it; capture one that does",
            EXIT_INPUT,
        )
    if starts_at - AlertTiming().lead_s < frame.start:
        err_console.print(
            f"[yellow]note:[/] the alert started at {iso(starts_at)}, less than "
            f"{AlertTiming().lead_s / 60:g} min after the bundle's window begins "
            f"({iso(frame.start)}): its onset may lie before the window",
            highlight=False,
        )


def serve(
    config: Annotated[
        Path | None,
        typer.Option(
            "--config",
            "-c",
            help="YAML config file (see docs/capture.md); INFERSIGHT_SERVE__* variables "
            "override it.",
            envvar="INFERSIGHT_SERVE_CONFIG",
        ),
    ] = None,
    host: Annotated[str | None, typer.Option("--host", help="Listen here (overrides).")] = None,
    port: Annotated[int | None, typer.Option("--port", help="Listen here (overrides).")] = None,
) -> None:
    """Receive Alertmanager webhooks; capture and diagnose each new firing group.

    Point an Alertmanager webhook_config at http://HOST:PORT/alerts with the same credentials
    as the config's `auth`. Each new firing group gets one bundle and its reports (md, html,
    json) under out_dir; / lists recent captures (with the same credentials, as do the reports
    and bundles), /metrics the service's own metrics. An accepted capture is kept in
    queue_dir until it has run: on SIGTERM, what does not finish within shutdown_grace runs
    at the next start.

    Example: infersight serve --config /etc/infersight/serve.yaml
    """
    try:
        import uvicorn

        from infersight.serve.app import create_app
    except ImportError as exc:
        fail(
            f"infersight serve needs FastAPI, uvicorn and prometheus_client ({exc.name} is "
            "missing): pip install 'infersight[serve]'",
            EXIT_USAGE,
        )
    from infersight.serve import ConfigError, load_config
    from infersight.serve.jobs import capture_runner

    try:
        cfg = load_config(config)
    except ConfigError as exc:
        fail(str(exc), EXIT_USAGE)
    listen = cfg.listen.model_copy(
        update={k: v for k, v in {"host": host, "port": port}.items() if v is not None}
    )
    from infersight.safe_write import OutputError, check_folder

    for key, folder in (("out_dir", cfg.out_dir), ("queue_dir", cfg.queue_folder())):
        try:
            check_folder(folder, create=True)
        except OutputError as exc:
            fail(f"{key}: {exc}", EXIT_USAGE)
    from infersight.serve.logsafe import log_to

    log_to(None, cfg.secrets())
    if not cfg.auth.pages and not cfg.auth.disabled:
        logging.getLogger("infersight.serve").warning(
            "auth.pages is false: the captures page, reports and bundles (logs, stacks) are "
            "open to anyone who reaches %s; keep it so only behind a proxy that authenticates",
            f"{listen.host}:{listen.port}",
        )
    base = f"http://{listen.host}:{listen.port}"
    try:  # a path file that cannot be used stops the start, not each capture
        runner = capture_runner(cfg, base_url=cfg.public_url or base)
    except ConfigError as exc:
        fail(str(exc), EXIT_USAGE)
    app = create_app(cfg, runner)
    err_console.print(
        f"infersight serve on {markup_safe(base)}: POST /alerts; captures in "
        f"{markup_safe(cfg.out_dir)}",
        highlight=False,
    )
    uvicorn.run(app, host=listen.host, port=listen.port, log_config=None, access_log=True)
