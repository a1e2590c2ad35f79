"""`infersight serve`'s one YAML config file, with environment-variable overrides.

    listen: {host: 127.0.0.1, port: 9095}
    auth: {bearer_token_file: /etc/infersight/webhook-token}      # or basic_auth: {...}
                                  # the same credentials open the page, reports and bundles
    prometheus: {url: http://prometheus:9090, tenant: team-a, http_config_file: ...}
    capture: {since: 30m, processes: [vllm], logs: [/var/log/vllm.log], gpu: true}
    out_dir: /var/lib/infersight/captures   # queue_dir: <out_dir>/.queue unless set
    max_concurrency: 2          # captures at once
    queue_size: 32              # captures waiting; beyond it a notification is refused (503)
    slack: {webhook_url: https://hooks.slack.com/services/...}

Every key can be overridden by `INFERSIGHT_SERVE__<KEY>[__<SUBKEY>...]` (e.g.
`INFERSIGHT_SERVE__PROMETHEUS__URL`, `INFERSIGHT_SERVE__MAX_CONCURRENCY=4`); values are read as
YAML scalars or flow lists. Secrets are `SecretStr`: never shown in a dump, a log or an error.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import yaml
from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
)

from infersight import userfile
from infersight.redact import register, register_basic_auth
from infersight.serve.moment import AlertTiming
from infersight.sources.connect import ConnectionSettings, file_name
from infersight.sources.errors import BadConnection, BadCredentials
from infersight.sources.httpconfig import HTTPConfigError, read_secret_file
from infersight.timeparse import parse_duration

if TYPE_CHECKING:
    from infersight.diagnose.path.topology import Topology

ENV_PREFIX = "INFERSIGHT_SERVE__"


def _seconds(value: Any) -> Any:
    return parse_duration(value) if isinstance(value, str) else value


Seconds = Annotated[float, BeforeValidator(_seconds), Field(gt=0)]
SecondsOrZero = Annotated[float, BeforeValidator(_seconds), Field(ge=0)]
FileName = Annotated[Path, AfterValidator(file_name)]


class ConfigError(ValueError):
    """A config that cannot be used; `str()` is the one line to print."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class BasicAuth(_Strict):
    username: str
    password: SecretStr | None = None
    password_file: FileName | None = None


class AuthConfig(_Strict):
    """How Alertmanager proves itself: its webhook_configs' http_config sends the same."""

    bearer_token: SecretStr | None = None
    bearer_token_file: FileName | None = None
    basic_auth: BasicAuth | None = None
    disabled: bool = Field(False, description="Accept unauthenticated webhooks (tests only).")
    pages: bool = Field(
        True,
        description="Ask the webhook's credentials for the captures page, the reports and the "
        "bundles: they hold logs and thread stacks. false only behind a proxy that "
        "authenticates every request itself.",
    )


class Listen(_Strict):
    host: str = "127.0.0.1"
    port: int = Field(9095, ge=0, lt=65536)


class CaptureConfig(_Strict):
    since: Seconds = 1800.0
    step: Seconds = 15.0
    baselines: list[Seconds] = Field(default_factory=lambda: [3600.0, 86400.0, 604800.0])
    pids: list[int] = Field(default_factory=list)
    processes: list[str] = Field(default_factory=list)
    logs: list[FileName] = Field(default_factory=list)
    log_bytes: int = Field(1 << 20, gt=0)
    gpu: bool = False
    part_timeout: Seconds = 60.0
    metrics_timeout: Seconds = 120.0
    #: how far the window reaches back past an alert's startsAt (serve/moment.py)
    alert: AlertTiming = Field(default_factory=AlertTiming)


class SlackConfig(_Strict):
    webhook_url: SecretStr
    timeout: Seconds = 10.0


class ServeConfig(_Strict):
    listen: Listen = Field(default_factory=Listen)
    auth: AuthConfig = Field(default_factory=AuthConfig)
    prometheus: ConnectionSettings | None = None
    capture: CaptureConfig = Field(default_factory=CaptureConfig)
    out_dir: FileName = Path("captures")
    max_concurrency: int = Field(2, ge=1, le=64)
    queue_size: int = Field(32, ge=0, le=100_000)
    max_body_bytes: int = Field(1 << 20, ge=1024)
    body_timeout: Seconds = Field(
        10.0,
        le=3600,
        description="Seconds a sender has to deliver a whole request body; past it the answer "
        "is 408 and the connection is closed. Alertmanager writes a notification (at most "
        "max_body_bytes, 1 MiB) at once: 10 s is ample on any network, while a client that "
        "trickles its body cannot hold a connection and its memory for long.",
    )
    queue_dir: FileName | None = Field(
        None,
        description="Where each accepted capture is kept until it has run, so that a restart "
        "resumes it (Alertmanager will not send the group again before its repeat_interval). "
        "None: <out_dir>/.queue.",
    )
    shutdown_grace: SecondsOrZero = Field(
        20.0,
        le=3600,
        description="On SIGTERM, seconds the queued and running captures get to finish; what "
        "is left stays in queue_dir for the next start. Under Kubernetes' default 30 s "
        "terminationGracePeriodSeconds (SIGKILL after it), with time to log what is left.",
    )
    dedupe_window: Seconds = 86400.0
    max_groups: int = Field(10_000, ge=1)
    recent: int = Field(200, ge=1, le=100_000)
    retry_after: int = Field(30, ge=1, description="Seconds a shed sender is asked to wait.")
    slack: SlackConfig | None = None
    public_url: str | None = Field(
        None, description="How people reach this service, for links in Slack summaries."
    )
    history: FileName | None = Field(
        None,
        description="A postmortem library folder (`infersight postmortem`): each capture's "
        "reports link the most similar past incidents in it. None: no history is searched.",
    )
    path_file: FileName | None = Field(
        None,
        description="A YAML file of request-path edges the metrics cannot show (docs/path.md, "
        "`diagnose --path-file`), read at start. None: the path is built from what is scraped.",
    )

    def topology(self) -> Topology | None:
        """The declared path edges, or None; a `ConfigError` in one line when unusable."""
        from infersight.diagnose.path.topology import TopologyError, load_topology

        if self.path_file is None:
            return None
        try:
            return load_topology(self.path_file)
        except (TopologyError, userfile.UserFileError) as exc:
            raise ConfigError(f"path_file: {exc}") from None

    def queue_folder(self) -> Path:
        return self.queue_dir if self.queue_dir is not None else self.out_dir / ".queue"

    def credentials(self) -> tuple[str | None, tuple[str, str] | None]:
        """(bearer token, (user, password)) expected of senders, read from files if so."""
        a = self.auth
        try:
            token = a.bearer_token.get_secret_value() if a.bearer_token else None
            if a.bearer_token_file is not None:
                token = read_secret_file(a.bearer_token_file, "auth.bearer_token_file")
            basic = None
            if a.basic_auth is not None:
                b = a.basic_auth
                pw = b.password.get_secret_value() if b.password else None
                if b.password_file is not None:
                    pw = read_secret_file(b.password_file, "auth.basic_auth.password_file")
                if pw is None:
                    raise ConfigError("auth.basic_auth: needs password or password_file")
                basic = (b.username, pw)
        except HTTPConfigError as exc:
            raise ConfigError(str(exc)) from None
        if token is None and basic is None and not a.disabled:
            raise ConfigError(
                "auth: set bearer_token(_file) or basic_auth (the same credentials as in "
                "Alertmanager's webhook http_config), or auth.disabled: true for a test"
            )
        return token, basic

    def secrets(self) -> list[str]:
        """Every secret the config holds or names (the webhook's credentials, from their files
        too, the Prometheus connection's, the Slack URL), registered with the redaction layer
        so no log line, capture or error shows them."""
        token, basic = self.credentials()
        found = [token] if token else []
        if basic is not None:
            register_basic_auth(*basic)
            found.append(basic[1])
        if self.slack is not None:
            found.append(self.slack.webhook_url.get_secret_value())
        if self.prometheus is not None:
            found += self.prometheus.secrets()
        register(*found)
        return found


def _env_overrides(env: Mapping[str, str]) -> dict[str, Any]:
    tree: dict[str, Any] = {}
    for key, raw in env.items():
        if not key.startswith(ENV_PREFIX):
            continue
        path = [p.lower() for p in key[len(ENV_PREFIX) :].split("__") if p]
        try:
            value = yaml.safe_load(raw) if raw.strip() else raw
        except (yaml.YAMLError, ValueError, RecursionError):  # a date out of range is a ValueError
            value = raw
        node = tree
        for i, part in enumerate(path[:-1]):
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                above = ENV_PREFIX + "__".join(path[: i + 1]).upper()
                raise ConfigError(f"{key}: {above} sets the whole section; set one or the other")
        if path:
            if isinstance(node.get(path[-1]), dict):
                raise ConfigError(f"{key}: its keys are set one by one too; set one or the other")
            node[path[-1]] = value
    return tree


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for k, v in over.items():
        out[k] = _merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def load_config(path: Path | None, env: Mapping[str, str] | None = None) -> ServeConfig:
    """The file (or nothing) with the environment's overrides; ConfigError naming the field."""
    doc: Any = {}
    where = str(path) if path is not None else "the environment"
    if path is not None:
        try:
            doc = yaml.safe_load(userfile.read_text(path)) or {}
        except userfile.UserFileError as exc:
            raise ConfigError(str(exc)) from None
        except yaml.YAMLError:
            raise ConfigError(f"{path}: not valid YAML") from None
        except (ValueError, RecursionError) as exc:  # a date out of range (0000-00-00), nesting
            why = " ".join(str(exc).split()) or type(exc).__name__
            raise ConfigError(f"{path}: not valid YAML ({why})") from None
        if not isinstance(doc, dict):
            raise ConfigError(f"{path}: must be a mapping of settings")
    doc = _merge(doc, _env_overrides(os.environ if env is None else env))
    try:
        cfg = ServeConfig.model_validate(doc)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(p) for p in first["loc"]) or "the config"
        raise ConfigError(f"{where}: {loc}: {first['msg']}") from None
    cfg.credentials()  # a missing or unreadable credential stops the start, not a webhook later
    if cfg.prometheus is not None:
        # what every capture's client would refuse (credentials from more than one place, an
        # unreadable token file, a URL that is none), refused now rather than at each capture
        try:
            cfg.prometheus.check()
        except (BadConnection, BadCredentials) as exc:
            raise ConfigError(f"{where}: prometheus: {exc}") from None
    return cfg
