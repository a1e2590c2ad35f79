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


class _Scrub(logging.Filter):
    """Every log record passes through the redaction layer before it is written."""

    def __init__(self, secrets: list[str]) -> None:
        super().__init__()
        from infersight.redact import Redactor

        self.redactor = Redactor(secrets)

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg = self.redactor.scrub(record.getMessage())
        record.args = None
        return True


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
    json) under out_dir; / lists recent captures, /metrics the service's own metrics. An
    accepted capture is kept in queue_dir until it has run: on SIGTERM, what does not finish
    within shutdown_grace runs at the next start.

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
    scrub = _Scrub(cfg.secrets())
    handler = logging.StreamHandler()
    handler.addFilter(scrub)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    for name in ("infersight", "uvicorn", "uvicorn.error", "uvicorn.access"):
        lg = logging.getLogger(name)
        lg.handlers = [handler]
        lg.setLevel(logging.INFO)
        lg.propagate = False
    base = f"http://{listen.host}:{listen.port}"
    app = create_app(cfg, capture_runner(cfg, base_url=cfg.public_url or base))
    err_console.print(
        f"infersight serve on {markup_safe(base)}: POST /alerts; captures in "
        f"{markup_safe(cfg.out_dir)}",
        highlight=False,
    )
    uvicorn.run(app, host=listen.host, port=listen.port, log_config=None, access_log=True)
