"""What a draft is written from: a diagnosis (a JSON report, or a bundle holding one), the
captures (bundle manifests) and, optionally, a runbook audit log.

Audit log: JSON Lines, one action a line: a time (`at`, as `infersight runbook run` writes
it, or `ts`: ISO 8601 or epoch seconds), `runbook`, and where present `event`, `step` and
`outcome`; any other keys are ignored.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from infersight import userfile
from infersight.diagnose.result import Diagnosis
from infersight.report.json_report import SCHEMA_NAME

#: the artifact a capture writes the diagnosis of that moment to (capture.DIAGNOSIS_ARTIFACT)
DIAGNOSIS_ARTIFACT = "diagnosis.json"


class InputError(Exception):
    """An input a draft cannot be written from; `str()` is the one line to print."""


@dataclass(frozen=True)
class Action:
    """One row of the timeline that is not an onset: a capture, a runbook step."""

    ts: float
    what: str
    source: str  # where the row comes from: "capture", "audit log"


@dataclass(frozen=True)
class Incident:
    diagnosis: Diagnosis
    actions: tuple[Action, ...] = ()
    origin: str = ""  # the file it was read from


def diagnosis_from_json(data: Any, where: str) -> Diagnosis:
    if not isinstance(data, dict) or data.get("schema") != SCHEMA_NAME:
        raise InputError(
            f"{where}: not an infersight diagnosis (write one with "
            "`infersight diagnose ... --format json -o report.json`)"
        )
    try:
        return Diagnosis.from_dict(data)
    except ValueError as exc:
        raise InputError(f"{where}: {exc}") from None
    except (KeyError, TypeError) as exc:
        raise InputError(f"{where}: damaged diagnosis ({type(exc).__name__}: {exc})") from None


def _read_json(path: Path) -> Any:
    try:
        return json.loads(userfile.read_text(path))
    except userfile.UserFileError as exc:
        raise InputError(str(exc)) from None
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}: not JSON ({exc})") from None


def _from_bundle(path: Path) -> Incident:
    from infersight.bundle import BundleError, read_bundle

    try:
        bundle = read_bundle(path)
    except BundleError as exc:
        raise InputError(str(exc)) from None
    if DIAGNOSIS_ARTIFACT not in bundle.artifact_names():
        from infersight.capture.metrics import diagnose_moment

        dx = diagnose_moment(
            bundle.windows, bundle.missing, None, bundle.manifest.source, queries=bundle.runs
        )
    else:
        raw = bundle.read_artifact(DIAGNOSIS_ARTIFACT)
        try:
            data = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise InputError(
                f"{path}: artifacts/{DIAGNOSIS_ARTIFACT} is not JSON ({exc})"
            ) from None
        dx = diagnosis_from_json(data, f"{path}: artifacts/{DIAGNOSIS_ARTIFACT}")
    m = bundle.manifest
    parts = [f"{len(m.signals)} signals", f"{len(m.instances)} instances"]
    if bundle.artifact_names():
        parts.append("artifacts: " + ", ".join(bundle.artifact_names()))
    what = f"Evidence captured in {path.name} ({'; '.join(parts)})"
    if m.notes:
        what += f"; notes: {' '.join(m.notes.split())}"
    return Incident(dx, (Action(m.created_at.timestamp(), what, "capture"),), str(path))


def load_incident(source: str | os.PathLike[str]) -> Incident:
    """The diagnosis in a JSON report or an evidence bundle (a bundle without one is
    diagnosed as `infersight diagnose BUNDLE` would)."""
    path = Path(source)
    if not path.exists():
        raise InputError(f"{path}: no such file; give a report.json or a bundle")
    if path.is_file() and path.suffix.lower() == ".json":
        return Incident(diagnosis_from_json(_read_json(path), str(path)), (), str(path))
    return _from_bundle(path)


def _ts(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        try:
            stamp = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return None
        return (stamp if stamp.tzinfo else stamp.replace(tzinfo=UTC)).timestamp()
    return None


def read_audit(path: str | os.PathLike[str]) -> tuple[list[Action], list[str]]:
    """The runbook actions in an audit log, and one problem per line that is not one (the
    rest are read)."""
    p = Path(path)
    try:
        lines = userfile.read_text(p).splitlines()
    except userfile.UserFileError as exc:
        raise InputError(str(exc)) from None
    actions: list[Action] = []
    problems: list[str] = []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            problems.append(f"{p}:{n}: not JSON; line skipped")
            continue
        ts = _ts(rec.get("at", rec.get("ts"))) if isinstance(rec, dict) else None
        if not isinstance(rec, dict) or ts is None or not rec.get("runbook"):
            problems.append(
                f"{p}:{n}: needs at or ts (ISO time or epoch) and runbook; line skipped"
            )
            continue
        actions.append(Action(ts, _action(rec), "audit log"))
    return actions, problems


def _action(rec: dict[str, Any]) -> str:
    """`Runbook ID [event] [step S][: outcome]`; a step the runbook log records whole is named
    by its `name` (or `index`)."""
    step = rec.get("step")
    if isinstance(step, dict):
        step = step.get("name", step.get("index"))
    parts = [f"Runbook {rec['runbook']}"]
    if rec.get("event") not in (None, ""):
        parts.append(str(rec["event"]))
    if step not in (None, ""):
        parts.append(f"step {step}")
    outcome = f": {rec['outcome']}" if rec.get("outcome") not in (None, "") else ""
    return " ".join(parts) + outcome
