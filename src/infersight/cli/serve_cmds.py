"""`infersight serve`: capture and diagnose when Alertmanager fires."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Annotated

import typer

from infersight.cli.common import EXIT_INPUT, EXIT_USAGE, err_console, fail, markup_safe

AlertOpt = Annotated[
    Path | None,
    typer.Option(
        "--alert",
        help="An Alertmanager notification saved as JSON (webhook payload version 4): diagnose "
        "at its startsAt, as `infersight serve` would.",
    ),
]


def alert_at(alert: Path | None, at: str | None) -> str | None:
    """The --at an --alert stands for (its earliest firing startsAt), or `at` without one."""
    if alert is None:
        return at
    if at is not None:
        fail("give --alert or --at, not both (the alert's startsAt is the moment)", EXIT_USAGE)
    from infersight.serve.alerts import PayloadError, read_alert_file
    from infersight.timeparse import iso

    try:
        notification = read_alert_file(alert)
    except PayloadError as exc:
        fail(f"--alert {exc}", EXIT_INPUT)
    return iso(notification.starts_at())


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
    app = create_app(cfg, capture_runner(cfg, base_url=cfg.public_url or base))
    err_console.print(
        f"infersight serve on {markup_safe(base)}: POST /alerts; captures in "
        f"{markup_safe(cfg.out_dir)}",
        highlight=False,
    )
    uvicorn.run(app, host=listen.host, port=listen.port, log_config=None, access_log=True)
