"""GPU facts: `nvidia-smi -q` (clocks, clock-event reasons, ECC, temperatures, retired pages)
and the kernel's NVRM lines (Xid events among them), when a GPU is present; a plain "no GPU
here" note when not."""

from __future__ import annotations

import glob
import shutil
import subprocess

from infersight.capture.parts import PartOutput

SMI_TIMEOUT_S = 20.0
NO_GPU = "no GPU here: nvidia-smi not found and no /dev/nvidia* device"


def _xid_lines(timeout_s: float) -> bytes:
    """NVRM Xid lines of the kernel log (empty when it cannot be read)."""
    if shutil.which("dmesg") is None:
        return b""
    try:
        res = subprocess.run(["dmesg"], capture_output=True, timeout=timeout_s, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return b""
    lines = [ln for ln in res.stdout.splitlines() if b"Xid" in ln or b"NVRM" in ln]
    return b"\n".join(lines[-500:]) + b"\n" if lines else b""


def capture_gpu(timeout_s: float = SMI_TIMEOUT_S) -> PartOutput:
    smi = shutil.which("nvidia-smi")
    devices = glob.glob("/dev/nvidia[0-9]*")
    if smi is None:
        if devices:
            note = f"{len(devices)} /dev/nvidia* devices but no nvidia-smi to read them"
            return PartOutput({"gpu/none.txt": (note + "\n").encode()}, note, partial=True)
        return PartOutput({"gpu/none.txt": (NO_GPU + "\n").encode()}, NO_GPU)
    try:
        res = subprocess.run([smi, "-q"], capture_output=True, timeout=timeout_s, check=False)
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"nvidia-smi -q did not answer within {timeout_s:g} s") from None
    if res.returncode != 0:
        err = " ".join((res.stderr or res.stdout).decode("utf-8", "replace").split())[:300]
        if not devices:
            return PartOutput({"gpu/none.txt": (f"{NO_GPU} ({err})\n").encode()}, NO_GPU)
        raise RuntimeError(f"nvidia-smi -q failed (exit {res.returncode}): {err}")
    artifacts = {"gpu/nvidia-smi-q.txt": res.stdout}
    kernel = _xid_lines(timeout_s)
    if kernel:
        artifacts["gpu/kernel-nvrm.txt"] = kernel
    xids = sum(b"Xid" in line for line in kernel.splitlines())
    gpus = res.stdout.count(b"\nGPU 0000")
    return PartOutput(artifacts, f"{gpus} GPUs; Xid events in the kernel log: {xids}")
