"""The project's Kubernetes manifests (deploy/kubernetes) read as kustomize would list them."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2] / "deploy"
KUBE = ROOT / "kubernetes"


@dataclass(frozen=True)
class Manifests:
    kustomization: dict[str, Any]
    objects: list[dict[str, Any]]

    def one(self, kind: str) -> dict[str, Any]:
        found = [o for o in self.objects if o["kind"] == kind]
        assert len(found) == 1, f"{len(found)} objects of kind {kind}"
        return found[0]

    @property
    def namespace(self) -> str:
        return str(self.kustomization["namespace"])

    def pod(self) -> dict[str, Any]:
        return dict(self.one("Deployment")["spec"]["template"]["spec"])

    def container(self) -> dict[str, Any]:
        (container,) = self.pod()["containers"]
        return dict(container)

    def serve_yaml(self) -> str:
        return str(self.one("ConfigMap")["data"]["serve.yaml"])


def load(folder: Path = KUBE) -> Manifests:
    kustomization = yaml.safe_load((folder / "kustomization.yaml").read_text())
    objects = []
    for name in kustomization["resources"]:
        objects += [doc for doc in yaml.safe_load_all((folder / name).read_text()) if doc]
    return Manifests(kustomization, objects)


def mount_of(container: dict[str, Any], volume: str) -> dict[str, Any]:
    (mount,) = [m for m in container["volumeMounts"] if m["name"] == volume]
    return dict(mount)
