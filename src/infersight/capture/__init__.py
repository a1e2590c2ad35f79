"""Freeze the scene (seed §2.3, §5.1): one evidence bundle of everything worth keeping before
anyone restarts anything.

    capture(CaptureRequest(out=Path("scene.tar.gz"), connection=ConnectionSettings(url=...),
                           since_s=1800, pids=(1234,), logs=(Path("/var/log/app.log"),),
                           gpu=True)) -> CaptureResult

The bundle is the ordinary evidence bundle (`infersight.bundle`): the incident window and its
baselines as metrics, and as artifacts `stacks/<pid>-<name>.txt` (py-spy),
`logs/<n>-<file>`, `gpu/nvidia-smi-q.txt` + `gpu/kernel-nvrm.txt` (Xid) or `gpu/none.txt`,
`host.json`, `diagnosis.json` and `capture.json` (every part's status, time and note).

Each part is optional and bounded in time; a part that fails or times out is recorded (in
capture.json, the manifest's notes and `source.capture_failed`) and never stops the others.
Credentials are scrubbed from every artifact.
"""

from infersight.capture.parts import PartResult
from infersight.capture.run import (
    CAPTURE_ARTIFACT,
    DIAGNOSIS_ARTIFACT,
    CaptureRequest,
    CaptureResult,
    capture,
)

__all__ = [
    "CAPTURE_ARTIFACT",
    "DIAGNOSIS_ARTIFACT",
    "CaptureRequest",
    "CaptureResult",
    "PartResult",
    "capture",
]
