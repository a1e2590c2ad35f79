"""Alertmanager webhook payloads (version 4), as Alertmanager 0.25 sends them."""

from __future__ import annotations

from typing import Any


def notification(
    group: str,
    fingerprints: list[str],
    status: str = "firing",
    starts_at: str = "2026-12-02T02:17:00Z",
    alertname: str = "InferenceQueueBacklog",
) -> dict[str, Any]:
    alerts = [
        {
            "status": status,
            "labels": {"alertname": alertname, "group": group, "fp": fp},
            "annotations": {"summary": "queue backlog"},
            "startsAt": starts_at,
            "endsAt": "0001-01-01T00:00:00Z",
            "generatorURL": "http://prometheus/graph",
            "fingerprint": fp,
        }
        for fp in fingerprints
    ]
    return {
        "version": "4",
        "groupKey": f'{{}}:{{alertname="{alertname}", group="{group}"}}',
        "truncatedAlerts": 0,
        "status": status,
        "receiver": "infersight",
        "groupLabels": {"alertname": alertname, "group": group},
        "commonLabels": {"alertname": alertname, "group": group},
        "commonAnnotations": {},
        "externalURL": "http://alertmanager:9093",
        "alerts": alerts,
    }
