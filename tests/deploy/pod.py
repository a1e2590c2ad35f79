"""The Deployment's pod run on this machine as far as one machine allows: its volumes (the
ConfigMap's and the Secret's keys as files, the claim and the emptyDirs as empty folders)
mounted at their mountPaths in a mount namespace of its own, its args after the image's
entrypoint, the image's environment, and the probes the kubelet would send.

Two roots: the image's own filesystem (`podman mount` of a container made from it), entered
with chroot as the pod's user and fsGroup, its root read-only as the manifest asks; or this
machine's, with the project's venv, as root (the venv's interpreter lies under /root, which
no other user may enter).
The network is this machine's: the listen port is moved to a free one through serve's own
environment override, the one thing the kubelet's pod network would make unnecessary."""

from __future__ import annotations

import contextlib
import ctypes
import os
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
from manifests import Manifests

from infersight.lab.live.servers import free_port

CLONE_NEWNS = 0x00020000  # <sched.h>: a mount namespace of the process's own


class PodError(RuntimeError):
    pass


def can_run() -> str | None:
    """Why a pod cannot run here, or None."""
    if os.geteuid() != 0:
        return "running the manifests' pod needs root (mount namespaces and bind mounts)"
    for tool in ("unshare", "mount", "chroot"):
        if shutil.which(tool) is None:
            return f"running the manifests' pod needs {tool} (util-linux, coreutils)"
    probe = subprocess.run(["unshare", "--mount", "true"], capture_output=True, check=False)
    if probe.returncode != 0:
        return f"unshare --mount fails here: {probe.stderr.decode().strip()}"
    return None


def _own_mount_namespace() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(CLONE_NEWNS) != 0:
        raise OSError(ctypes.get_errno(), "unshare(CLONE_NEWNS)")


def _volume_files(
    manifests: Manifests, volume: dict[str, Any], into: Path, fs_group: int | None
) -> None:
    """A ConfigMap's or Secret's keys as files, owned by root and the pod's fsGroup with the
    volume's defaultMode, as the kubelet writes them."""
    into.mkdir(parents=True, exist_ok=True)
    if "configMap" in volume:
        files, mode = manifests.one("ConfigMap")["data"], volume["configMap"].get("defaultMode")
    else:
        secret = manifests.one("Secret")
        assert secret["metadata"]["name"] == volume["secret"]["secretName"]
        files, mode = secret["stringData"], volume["secret"].get("defaultMode")
    for key, text in files.items():
        path = into / key
        path.write_text(text)
        path.chmod(0o644 if mode is None else int(mode))
        if fs_group is not None:
            os.chown(path, 0, fs_group)


class Pod:
    def __init__(
        self,
        manifests: Manifests,
        workdir: Path,
        *,
        image_root: Path | None = None,
        image_config: dict[str, Any] | None = None,
        env: dict[str, str] | None = None,
    ) -> None:
        self.manifests, self.workdir = manifests, workdir
        self.image_root, self.image_config = image_root, image_config or {}
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = {"INFERSIGHT_SERVE__LISTEN__PORT": str(self.port), **(env or {})}
        self.log = workdir / "pod.log"
        self._proc: subprocess.Popen[bytes] | None = None
        self._made: list[Path] = []

    # -- what the kubelet would do ---------------------------------------------------------
    def _mounts(self) -> list[tuple[Path, Path | None, bool]]:
        """(mountPath, source or None for a tmpfs, read-only) for each volumeMount."""
        container = self.manifests.container()
        volumes = {v["name"]: v for v in self.manifests.pod()["volumes"]}
        fs_group = self.manifests.pod().get("securityContext", {}).get("fsGroup")
        mounts: list[tuple[Path, Path | None, bool]] = []
        for mount in container["volumeMounts"]:
            volume = volumes[mount["name"]]
            folder = self.workdir / "volumes" / mount["name"]
            source: Path | None = folder
            if "configMap" in volume or "secret" in volume:
                _volume_files(self.manifests, volume, folder, fs_group)
            elif "emptyDir" in volume:
                source = None
            else:  # the claim: group-owned by fsGroup, group-writable, setgid
                folder.mkdir(parents=True, exist_ok=True)
                if fs_group is not None:
                    os.chown(folder, 0, fs_group)
                    folder.chmod(0o2775)
            if source is not None and mount.get("subPath"):
                source = source / mount["subPath"]
            mounts.append((Path(mount["mountPath"]), source, bool(mount.get("readOnly"))))
        return mounts

    def _script(self) -> str:
        root = self.image_root or Path("/")
        lines = ["set -e", "mount --make-rprivate /"]  # nothing mounted here leaks out
        if self.image_root is not None:
            lines += [
                f"mount --bind {root} {root}",
                f"mount --rbind /dev {root}/dev",
                f"mount --rbind /proc {root}/proc",
            ]
        # tmpfs last: a bind mount's source may lie under /tmp, which an emptyDir there hides
        for target, source, read_only in sorted(self._mounts(), key=lambda m: m[1] is None):
            where = Path(str(root) + str(target)) if self.image_root else target
            if source is None:
                lines.append(f"mount -t tmpfs tmpfs {where}")
                continue
            lines.append(f"mount --bind {shlex.quote(str(source))} {shlex.quote(str(where))}")
            if read_only:
                lines.append(f"mount -o remount,bind,ro {shlex.quote(str(where))}")
        container = self.manifests.container()
        command = [*self.image_config.get("Entrypoint", ["infersight"]), *container["args"]]
        if self.image_root is None:
            command[0] = str(Path(sys.executable).parent / command[0])
            lines.append(f"exec {shlex.join(command)}")
            return "\n".join(lines)
        security = {
            **self.manifests.pod().get("securityContext", {}),
            **container.get("securityContext", {}),
        }
        if security.get("readOnlyRootFilesystem"):
            lines.append(f"mount -o remount,bind,ro {root}")
        user = f"{security['runAsUser']}:{security.get('runAsGroup', security['runAsUser'])}"
        groups = f" --groups={security['fsGroup']}" if "fsGroup" in security else ""
        workdir = self.image_config.get("WorkingDir") or "/"
        inner = f"cd {shlex.quote(workdir)} && exec {shlex.join(command)}"
        chroot = f"exec chroot --userspec={user}{groups} {root}"
        lines.append(f"{chroot} /bin/sh -c {shlex.quote(inner)}")
        return "\n".join(lines)

    def _environment(self) -> dict[str, str]:
        if self.image_root is None:
            return {**os.environ, **self.env}
        image_env = dict(e.split("=", 1) for e in self.image_config.get("Env", []))
        return {**image_env, "HOME": self.image_config.get("WorkingDir", "/"), **self.env}

    def _ready(self) -> bool:
        probe = self.manifests.container()["readinessProbe"]["httpGet"]
        with contextlib.suppress(httpx.HTTPError):
            return httpx.get(self.url + probe["path"], timeout=2).status_code == 200
        return False

    def _mount_points(self) -> None:
        """Make the mount points, as the container runtime does: in the image's own writable
        layer, or on this machine (removed after)."""
        for target, source, _ro in self._mounts():
            point = Path(str(self.image_root) + str(target)) if self.image_root else target
            is_file = source is not None and source.is_file()
            folder = point.parent if is_file else point
            if not folder.exists():
                folder.mkdir(parents=True)
                self._made.append(folder)
            if is_file and not point.exists():
                point.touch()
                self._made.insert(0, point)
        if self.image_root is not None:
            self._made = []  # the container's layer goes with the container

    def __enter__(self) -> Pod:
        self._mount_points()
        script = self._script()
        (self.workdir / "pod.sh").write_text(script + "\n")
        with open(self.log, "ab") as log:
            # the shell execs the entrypoint: the pod's process is this child, and SIGTERM
            # reaches it as the kubelet's would
            self._proc = subprocess.Popen(
                ["sh", str(self.workdir / "pod.sh")],
                stdout=log,
                stderr=subprocess.STDOUT,
                env=self._environment(),
                preexec_fn=_own_mount_namespace,
            )
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                self._cleanup()
                raise PodError(f"the pod exited: {self.log.read_text()[-3000:]}")
            if self._ready():
                return self
            time.sleep(0.2)
        self.__exit__()
        raise PodError(
            f"the pod never answered its readiness probe: {self.log.read_text()[-3000:]}"
        )

    def seen_from_inside(self) -> tuple[int, bool]:
        """(the process's user id, whether its root is mounted read-only), from /proc."""
        assert self._proc is not None
        status = Path(f"/proc/{self._proc.pid}/status").read_text()
        uid = int(next(line for line in status.splitlines() if line.startswith("Uid:")).split()[1])
        mounts = Path(f"/proc/{self._proc.pid}/mountinfo").read_text().splitlines()
        root = [line.split() for line in mounts if line.split()[4] == "/"][-1]
        return uid, "ro" in root[5].split(",")

    def stop(self) -> int:
        """SIGTERM, as the kubelet sends, waited on for terminationGracePeriodSeconds."""
        proc, self._proc = self._proc, None
        if proc is None:
            return 0
        grace = self.manifests.pod().get("terminationGracePeriodSeconds", 30)
        proc.terminate()
        try:
            return proc.wait(grace)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            raise PodError(f"the pod outlived its {grace} s grace period") from None
        finally:
            self._cleanup()

    def _cleanup(self) -> None:
        for path in self._made:
            with contextlib.suppress(OSError):
                path.unlink() if path.is_file() else path.rmdir()
        self._made = []

    def __exit__(self, *exc: object) -> None:
        with contextlib.suppress(PodError):
            self.stop()
