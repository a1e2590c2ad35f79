"""The container image of deploy/Containerfile, built here with podman.

No image registry is reachable where the tests run, so the Containerfile's default base
(python:3.11-slim) cannot be pulled: the base is Debian bookworm (Python 3.11) made with
debootstrap from Debian's mirror, kept under ~/.cache/infersight/image-base between runs. It
trusts what this machine trusts (its CA bundle), since pip in the build reaches PyPI through
the same network. podman builds with chroot isolation: the OCI runtime (crun) cannot create
containers in these sandboxes (no cgroup controllers, no setrlimit), so the image is run from
its own root filesystem (podman mount) by tests/deploy/pod.py."""

from __future__ import annotations

import json
import shutil
import subprocess
import tarfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
CACHE = Path.home() / ".cache" / "infersight" / "image-base"
BASE = "localhost/infersight-test-base:bookworm"
IMAGE = "localhost/infersight:test"
CA_BUNDLE = Path("/etc/ssl/certs/ca-certificates.crt")


class ImageError(RuntimeError):
    pass


def missing() -> str | None:
    for tool in ("podman", "debootstrap"):
        if shutil.which(tool) is None:
            return f"the image test needs {tool}: apt-get install podman debootstrap"
    return None


def _run(cmd: list[str], timeout: float) -> str:
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
    if done.returncode != 0:
        raise ImageError(f"{' '.join(cmd[:3])}… failed: {(done.stdout + done.stderr)[-3000:]}")
    return done.stdout.strip()


def _base_tarball() -> Path:
    tarball = CACHE / "bookworm-python3.tar"
    if tarball.exists():
        return tarball
    CACHE.mkdir(parents=True, exist_ok=True)
    root = CACHE / "rootfs"
    shutil.rmtree(root, ignore_errors=True)
    _run(
        [
            *("debootstrap", "--variant=minbase", "--include=python3,python3-venv"),
            *("bookworm", str(root), "http://deb.debian.org/debian"),
        ],
        timeout=900,
    )
    (root / "etc/ssl/certs").mkdir(parents=True, exist_ok=True)
    shutil.copy(CA_BUNDLE, root / "etc/ssl/certs/ca-certificates.crt")
    partial = tarball.with_suffix(".partial")
    with tarfile.open(partial, "w") as tar:
        tar.add(root, arcname=".")
    partial.rename(tarball)
    shutil.rmtree(root)
    return tarball


def build() -> str:
    """Build the image from the project's tree; its id."""
    change = f"ENV=PIP_CERT={CA_BUNDLE}"
    _run(["podman", "import", "--change", change, str(_base_tarball()), BASE], timeout=300)
    _run(
        [
            *("podman", "build", "--isolation=chroot", "--network=host"),
            *("--build-arg", f"BASE={BASE}", "-f", str(REPO / "deploy/Containerfile")),
            *("-t", IMAGE, str(REPO)),
        ],
        timeout=900,
    )
    return _run(["podman", "image", "inspect", IMAGE, "--format", "{{.Id}}"], timeout=60)


def config() -> dict[str, Any]:
    out = _run(["podman", "image", "inspect", IMAGE, "--format", "{{json .Config}}"], 60)
    return dict(json.loads(out))


CONTAINER = "infersight-image-test"


def mount() -> Path:
    """The root filesystem of a container made from the image (created, never started: its
    own writable layer takes the mount points the kubelet's runtime would make)."""
    unmount()
    _run(["podman", "create", "--name", CONTAINER, IMAGE], timeout=60)
    return Path(_run(["podman", "mount", CONTAINER], timeout=60))


def unmount() -> None:
    for cmd in (["podman", "umount", CONTAINER], ["podman", "rm", "--force", CONTAINER]):
        subprocess.run(cmd, capture_output=True, check=False)
