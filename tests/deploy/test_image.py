"""The container image (deploy/Containerfile) built with podman and run as the manifests'
pod: its entrypoint, its user (not root), a read-only root, the manifests' volumes. An alert
from Alertmanager ends as a diagnosed capture. `make test-image` runs it (minutes: a Debian
base made once, then the image); `make test` leaves it out."""

from __future__ import annotations

import os
from pathlib import Path

import image
import pytest
from test_serve_pod import alert_ends_as_a_capture, skip_unless_pods_run

pytestmark = pytest.mark.image


def test_the_image_serves_an_alert_as_the_manifests_pod(tmp_path: Path) -> None:
    why = image.missing()
    if why is not None:
        if os.environ.get("INFERSIGHT_REQUIRE_IMAGE") == "1":
            pytest.fail(why)
        pytest.skip(why)
    skip_unless_pods_run()
    image.build()
    cfg = image.config()
    assert cfg["Entrypoint"] == ["infersight"] and cfg["User"] == "10001"
    root = image.mount()
    try:
        # the package's data came along (catalog, rules): the wheel was installed, not linked
        site = sorted((root / "opt/infersight/lib").glob("python3*/site-packages/infersight"))
        assert site and (site[0] / "catalog" / "signals.yaml").exists()
        alert_ends_as_a_capture(tmp_path, image_root=root, image_config=cfg)
    finally:
        image.unmount()
