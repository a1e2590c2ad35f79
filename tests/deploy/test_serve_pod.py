"""`serve` started from its Kubernetes manifests (deploy/kubernetes), end to end with real
parts: the Deployment's pod (its mounts, args and probes: tests/deploy/pod.py), a real
Alertmanager with the receiver the AlertmanagerConfig describes, a real Prometheus holding an
incident. An alert posted to Alertmanager ends as a diagnosed capture on the pod's volume."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from manifests import load, mount_of
from pod import Pod, can_run
from tests.serve.alerting_servers import LocalAlertmanager

from incident_now import incident_now
from infersight.lab.live.servers import LocalPrometheus
from servers import require

pytestmark = pytest.mark.server


def _receiver_config(pod_url: str, token: str) -> str:
    """alertmanager.yml as the operator renders the AlertmanagerConfig, its Service URL
    pointed at the pod here (the Service's port and the pod's are one: 9095 → http)."""
    (receiver,) = load().one("AlertmanagerConfig")["spec"]["receivers"]
    (hook,) = receiver["webhookConfigs"]
    path = hook["url"].split(":9095", 1)[1]
    return f"""
route:
  receiver: {receiver["name"]}
  group_by: [alertname]
  group_wait: 1s
  group_interval: 5s
  repeat_interval: 1h
receivers:
  - name: {receiver["name"]}
    webhook_configs:
      - url: {pod_url}{path}
        send_resolved: {str(hook["sendResolved"]).lower()}
        http_config:
          authorization: {{type: Bearer, credentials: {token}}}
"""


def _wait_for(folder: Path, pattern: str, timeout: float = 120.0) -> list[Path]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if found := sorted(folder.glob(pattern)):
            return found
        time.sleep(0.5)
    return []


def skip_unless_pods_run() -> None:
    why = can_run()
    if why is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(why)
        pytest.skip(why)
    for name in ("prometheus", "promtool", "prometheus-alertmanager"):
        require(name)


def alert_ends_as_a_capture(tmp_path: Path, **pod_args: Any) -> None:
    """The pod started from the manifests takes an alert from Alertmanager, captures the
    incident in Prometheus onto its volume, and stops cleanly on SIGTERM."""
    manifests = load()
    token = manifests.one("Secret")["stringData"]["token"]
    om, _end = incident_now(tmp_path)
    with LocalPrometheus(backfill=[om]) as prom:
        # the ConfigMap names the in-cluster Prometheus; here it is the one holding the incident
        env = {"INFERSIGHT_SERVE__PROMETHEUS__URL": prom.url}
        pod = Pod(manifests, tmp_path, env=env, **pod_args)
        with pod, LocalAlertmanager(_receiver_config(pod.url, token)) as am:
            refused = httpx.post(pod.url + "/alerts", json={}, timeout=10)
            alert = {
                "labels": {"alertname": "InferenceLatencyHigh", "namespace": manifests.namespace},
                "annotations": {"summary": "P99 over its objective"},
            }
            assert httpx.post(am.url + "/api/v2/alerts", json=[alert], timeout=10).is_success
            data = tmp_path / "volumes" / "data"
            reports = _wait_for(data / "captures", "*/report.json")
            assert reports, f"no report after 120 s: {pod.log.read_text()[-3000:]}"
            metrics = httpx.get(pod.url + "/metrics", timeout=10).text
            uid, read_only = pod.seen_from_inside()
            code = pod.stop()
    assert refused.status_code == 401  # the webhook wants the Secret's token
    # a clean stop within the grace period (uvicorn re-raises the SIGTERM it handled)
    assert code in (0, -signal.SIGTERM), pod.log.read_text()[-2000:]
    assert "Application shutdown complete" in pod.log.read_text()
    # the capture lies on the claim's volume, where the manifest's config put it
    mounted = mount_of(manifests.container(), "data")["mountPath"]
    assert reports[0].parent.parent.name == "captures" and mounted == "/var/lib/infersight"
    assert reports[0].parent.name.split("-", 1)[1].startswith("InferenceLatencyHigh")
    roots = [r["hypothesis"] for r in json.loads(reports[0].read_text())["root_causes"]]
    assert roots, "the capture of the backfilled incident named no root cause"
    assert 'infersight_serve_notifications_total{result="accepted"} 1.0' in metrics
    assert token not in pod.log.read_text()
    if pod.image_root is not None:  # the image runs as the manifest's user, on a read-only root
        assert uid == manifests.pod()["securityContext"]["runAsUser"] and read_only


def test_an_alert_reaches_serve_run_from_the_manifests(tmp_path: Path) -> None:
    skip_unless_pods_run()
    alert_ends_as_a_capture(tmp_path)
