"""`infersight serve`: capture and diagnose when Alertmanager fires.

    cfg = load_config(Path("serve.yaml"))          # YAML + INFERSIGHT_SERVE__* overrides
    app = create_app(cfg, capture_runner(cfg))     # FastAPI; run it with uvicorn

`config` (the file), `alerts` (the webhook payload), `dispatch` (grouping, de-duplication and
bounded work), `jobs` (capture + reports + Slack for one group), `app` (the HTTP endpoints).
"""

from infersight.serve.alerts import Notification, PayloadError, parse_notification, read_alert_file
from infersight.serve.config import ConfigError, ServeConfig, load_config
from infersight.serve.dispatch import CaptureRecord, Decision, Dispatcher, Job, Outcome

__all__ = [
    "CaptureRecord",
    "ConfigError",
    "Decision",
    "Dispatcher",
    "Job",
    "Notification",
    "Outcome",
    "PayloadError",
    "ServeConfig",
    "load_config",
    "parse_notification",
    "read_alert_file",
]
