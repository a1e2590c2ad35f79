"""The Kubernetes manifests of `serve` (deploy/kubernetes): valid against the Kubernetes
schemas and the Prometheus Operator's fields, and consistent with each other and with serve's
own config, so that what `kubectl apply -k` creates is a service Alertmanager can reach."""

from __future__ import annotations

import copy
from typing import Any

import jsonschema
import kubernetes_validate
import pytest
import yaml
from manifests import KUBE, load, mount_of
from operator_fields import SCHEMAS

from infersight.serve.config import ServeConfig

KUBERNETES = "1.32"  # the oldest release still supported upstream when this was written


def _validate(obj: dict[str, Any]) -> None:
    if obj["kind"] in SCHEMAS:
        jsonschema.validate(obj, SCHEMAS[obj["kind"]])
    else:
        kubernetes_validate.validate(obj, KUBERNETES, strict=True)


def test_the_kustomization_lists_every_manifest_once() -> None:
    manifests = load()
    listed = manifests.kustomization["resources"]
    on_disk = sorted(p.name for p in KUBE.glob("*.yaml") if p.name != "kustomization.yaml")
    assert sorted(listed) == on_disk and len(set(listed)) == len(listed)
    kinds = sorted(o["kind"] for o in manifests.objects)
    built_in = ["ConfigMap", "Secret", "PersistentVolumeClaim", "Deployment", "Service"]
    assert kinds == sorted([*built_in, "ServiceMonitor", "AlertmanagerConfig"])


@pytest.mark.parametrize("kind", [o["kind"] for o in load().objects])
def test_each_object_validates(kind: str) -> None:
    _validate(load().one(kind))


def test_the_validators_refuse_a_misspelt_field() -> None:
    # the checks above can fail: a typo in a built-in kind and in a custom resource is refused
    deployment = copy.deepcopy(load().one("Deployment"))
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    container["readinesProbe"] = container.pop("readinessProbe")
    with pytest.raises(kubernetes_validate.ValidationError):
        _validate(deployment)
    monitor = copy.deepcopy(load().one("ServiceMonitor"))
    monitor["spec"]["endpoints"][0]["intervall"] = "30s"
    with pytest.raises(jsonschema.ValidationError):
        _validate(monitor)
    receiver = copy.deepcopy(load().one("AlertmanagerConfig"))
    receiver["spec"]["receivers"][0]["webhookConfigs"][0]["send_resolved"] = True
    with pytest.raises(jsonschema.ValidationError):
        _validate(receiver)


def test_selectors_ports_and_probes_meet() -> None:
    m = load()
    deployment, service, monitor = m.one("Deployment"), m.one("Service"), m.one("ServiceMonitor")
    pod_labels = deployment["spec"]["template"]["metadata"]["labels"]
    selector = deployment["spec"]["selector"]["matchLabels"]
    assert selector.items() <= pod_labels.items()
    assert service["spec"]["selector"].items() <= pod_labels.items()
    assert (
        monitor["spec"]["selector"]["matchLabels"].items() <= service["metadata"]["labels"].items()
    )
    container = m.container()
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    (service_port,) = service["spec"]["ports"]
    assert service_port["targetPort"] in ports
    assert monitor["spec"]["endpoints"][0]["port"] == service_port["name"]
    assert monitor["spec"]["endpoints"][0]["path"] == "/metrics"
    for probe in ("readinessProbe", "livenessProbe"):
        assert container[probe]["httpGet"] == {"path": "/healthz", "port": "http"}
    config = ServeConfig.model_validate(yaml.safe_load(m.serve_yaml()))
    assert config.listen.port == ports["http"] and config.listen.host == "0.0.0.0"


def test_the_config_reads_what_the_pod_mounts() -> None:
    m = load()
    container, pod = m.container(), m.pod()
    config = ServeConfig.model_validate(yaml.safe_load(m.serve_yaml()))
    config_mount = mount_of(container, "config")
    assert container["args"] == ["serve", "--config", config_mount["mountPath"]]
    # the token file is the Secret's key, under its mount
    token = mount_of(container, "token")
    secret = m.one("Secret")
    assert config.auth.bearer_token_file is not None
    folder, key = config.auth.bearer_token_file.parent, config.auth.bearer_token_file.name
    assert str(folder) == token["mountPath"] and key in secret["stringData"]
    # captures and the queue on the claim, which survives a restart; the root is read-only
    data = mount_of(container, "data")["mountPath"]
    for path in (config.out_dir, config.queue_dir):
        assert path is not None and str(path).startswith(data + "/")
    volumes = {v["name"]: v for v in pod["volumes"]}
    assert (
        volumes["data"]["persistentVolumeClaim"]["claimName"]
        == m.one("PersistentVolumeClaim")["metadata"]["name"]
    )
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    # the queued captures get shutdown_grace before the kubelet's SIGKILL
    assert pod["terminationGracePeriodSeconds"] > config.shutdown_grace + 10
    # requests and a memory limit; no CPU limit (a CFS quota throttles a Python service)
    resources = container["resources"]
    assert {"cpu", "memory"} <= resources["requests"].keys()
    assert resources["limits"].keys() == {"memory"}


def test_alertmanager_sends_to_the_service_with_the_secret() -> None:
    m = load()
    service, secret = m.one("Service"), m.one("Secret")
    (receiver,) = m.one("AlertmanagerConfig")["spec"]["receivers"]
    (hook,) = receiver["webhookConfigs"]
    name, port = service["metadata"]["name"], service["spec"]["ports"][0]["port"]
    assert hook["url"] == f"http://{name}.{m.namespace}.svc:{port}/alerts"
    assert hook["sendResolved"] is True  # serve forgets a resolved group (docs/capture.md)
    credentials = hook["httpConfig"]["authorization"]["credentials"]
    assert credentials["name"] == secret["metadata"]["name"]
    assert credentials["key"] in secret["stringData"]
    assert m.one("AlertmanagerConfig")["spec"]["route"]["receiver"] == receiver["name"]
