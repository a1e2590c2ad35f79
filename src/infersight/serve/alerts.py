"""Alertmanager's webhook payload (version 4) and its groups.

https://prometheus.io/docs/alerting/latest/configuration/#webhook_config documents it:
{version, groupKey, truncatedAlerts, status, receiver, groupLabels, commonLabels,
commonAnnotations, externalURL, alerts: [{status, labels, annotations, startsAt, endsAt,
generatorURL, fingerprint}]}.
"""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from infersight import userfile
from infersight.controls import shown
from infersight.sources.jsonload import JSONDepthError, loads

MAX_DEPTH = 16


class PayloadError(ValueError):
    """A payload refused: `status` is the HTTP status to answer, `str()` the reason."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class Alert(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)

    status: Literal["firing", "resolved"]
    labels: dict[str, str]
    annotations: dict[str, str] = Field(default_factory=dict)
    startsAt: datetime
    endsAt: datetime | None = None
    generatorURL: str = ""
    fingerprint: str = ""

    @field_validator("startsAt", "endsAt")
    @classmethod
    def _utc(cls, v: datetime | None) -> datetime | None:
        """In UTC (a time without an offset is read as UTC, as Alertmanager writes them); one
        that is out of range there (9999-12-31T23:00:00-12:00) is refused here, not later."""
        if v is None:
            return None
        try:
            return v.replace(tzinfo=UTC) if v.tzinfo is None else v.astimezone(UTC)
        except OverflowError:
            raise ValueError("out of range in UTC (years 1 to 9999)") from None

    def key(self) -> str:
        """The fingerprint, or one made from the labels when a sender leaves it out."""
        if self.fingerprint:
            return self.fingerprint
        text = json.dumps(self.labels, sort_keys=True).encode()
        return hashlib.sha256(text).hexdigest()[:16]


class Notification(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)

    version: Literal["4"]
    groupKey: str = Field(min_length=1, max_length=4096)
    truncatedAlerts: int = 0
    status: Literal["firing", "resolved"]
    receiver: str = ""
    groupLabels: dict[str, str] = Field(default_factory=dict)
    commonLabels: dict[str, str] = Field(default_factory=dict)
    commonAnnotations: dict[str, str] = Field(default_factory=dict)
    externalURL: str = ""
    alerts: list[Alert] = Field(max_length=10_000)

    def firing(self) -> list[Alert]:
        return [a for a in self.alerts if a.status == "firing"]

    def starts_at(self) -> float:
        """The earliest startsAt of the firing alerts (of all, when none fires)."""
        alerts = self.firing() or self.alerts
        times = [a.startsAt.timestamp() for a in alerts]
        return min(times) if times else datetime.now(UTC).timestamp()

    def scope(self) -> dict[str, str]:
        """The labels that hold for the whole group: its scope for the capture."""
        return {**self.commonLabels, **self.groupLabels}

    def name(self) -> str:
        return self.scope().get("alertname") or "alert"


def parse_notification(body: bytes) -> Notification:
    """The notification in `body`; PayloadError(400) for bad JSON, (422) for the wrong shape."""
    try:
        doc = loads(body, MAX_DEPTH)
    except JSONDepthError:
        raise PayloadError(400, f"JSON nested deeper than {MAX_DEPTH}; not an alert") from None
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise PayloadError(400, "the body is not JSON") from None
    if not isinstance(doc, dict):
        raise PayloadError(422, "the body is not a JSON object")
    if doc.get("version") != "4":
        raise PayloadError(
            422, f"webhook payload version {doc.get('version')!r}; only Alertmanager's 4 is read"
        )
    try:
        return Notification.model_validate(doc)
    except ValidationError as exc:
        first = exc.errors()[0]
        # a label's name is the sender's: one with a newline would break the one-line answer
        loc = shown(".".join(str(p) for p in first["loc"]), one_line=True)
        msg = shown(first["msg"], one_line=True)
        raise PayloadError(422, f"not an Alertmanager notification: {loc}: {msg}") from None


def read_alert_file(path: Path, max_bytes: int = 1 << 20) -> Notification:
    """A saved notification (what Alertmanager POSTed, or `amtool`'s JSON of one group)."""
    try:
        body = userfile.read_bytes(path)
    except userfile.UserFileError as exc:
        raise PayloadError(400, str(exc)) from None
    if len(body) > max_bytes:
        raise PayloadError(413, f"{path}: over {max_bytes} bytes; not one notification")
    try:
        return parse_notification(body)
    except PayloadError as exc:
        raise PayloadError(exc.status, f"{path}: {exc}") from None
