"""Read and verify an evidence bundle: manifest schema, checksums, members, Parquet, grid."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from infersight.bundle.container import read_members
from infersight.bundle.errors import BundleError, fail
from infersight.bundle.manifest import ARTIFACTS_DIR, INCIDENT, MANIFEST, Manifest, parse_manifest
from infersight.bundle.table import parquet_to_frame
from infersight.frame import MetricFrame
from infersight.limits import LimitError, Limits, current
from infersight.provenance import QueryRun

_RECREATE = "re-create it with `infersight pull`"


@dataclass(frozen=True)
class Bundle:
    """A verified bundle, fully in memory."""

    path: Path
    manifest: Manifest
    windows: dict[str, MetricFrame]
    size: int  # bytes on disk: the file, or the sum of the directory's members
    _artifacts: dict[str, bytes] = field(repr=False)

    @property
    def frame(self) -> MetricFrame:
        """The incident window."""
        return self.windows[INCIDENT]

    @property
    def missing(self) -> dict[str, str]:
        return dict(self.manifest.missing)

    @property
    def runs(self) -> tuple[QueryRun, ...]:
        """The queries the incident window's series came from (() when not recorded)."""
        return self.manifest.runs(INCIDENT)

    def artifact_names(self) -> list[str]:
        return sorted(self._artifacts)

    def read_artifact(self, name: str) -> bytes:
        try:
            return self._artifacts[name]
        except KeyError:
            have = ", ".join(self.artifact_names()) or "none"
            raise BundleError(
                f"bundle {self.path.name}: no artifact {name!r} (artifacts: {have})"
            ) from None


def _verify_members(where: str, manifest: Manifest, members: dict[str, bytes]) -> None:
    extra = sorted(set(members) - set(manifest.members) - {MANIFEST})
    if extra:
        raise fail(where, "not listed in manifest.json (added after writing?)", ", ".join(extra))
    for name, digest in manifest.members.items():
        if name not in members:
            raise fail(where, f"listed in manifest.json but absent; {_RECREATE}", name)
        if hashlib.sha256(members[name]).hexdigest() != digest:
            raise fail(where, f"sha256 mismatch (damaged or edited); {_RECREATE}", name)


def _check_window(where: str, manifest: Manifest, window: str, frame: MetricFrame) -> None:
    member = manifest.windows[window].file
    stray = sorted(set(frame.signals) - set(manifest.signals))
    if stray:
        raise fail(where, f"signal(s) not in manifest.json: {', '.join(stray)}", member)
    stray = sorted(set(frame.instances) - set(manifest.instances))
    if stray:
        raise fail(where, f"instance(s) not in manifest.json: {', '.join(stray)}", member)


def _check_grid(where: str, manifest: Manifest, limits: Limits) -> None:
    """Refuse a declared grid too large to hold, before any array is made for it."""
    cells = len(manifest.signals) * len(manifest.instances)
    for name, spec in manifest.windows.items():
        n = spec.n
        if n > limits.grid_points:
            raise fail(
                where,
                f"window {name} declares {n:,} grid points, over the {limits.grid_points:,} "
                f"limit; {limits.hint('grid_points')}",
                MANIFEST,
            )
        if cells * n > limits.grid_values:
            raise fail(
                where,
                f"window {name} declares {cells * n:,} values ({len(manifest.signals)} signals × "
                f"{len(manifest.instances)} instances × {n:,} points), over the "
                f"{limits.grid_values:,} limit; {limits.hint('grid_values')}",
                MANIFEST,
            )


def _check_dates(where: str, manifest: Manifest, limits: Limits) -> None:
    """Refuse a window that ends long after the bundle was made: its readings are misdated."""
    made = manifest.created_at
    for name, spec in manifest.windows.items():
        if spec.end > made.timestamp() + limits.ahead_s:
            end = datetime.fromtimestamp(spec.end, UTC)
            raise fail(
                where,
                f"window {name} ends at {end:%Y-%m-%d %H:%M} UTC, after the bundle was made "
                f"({made:%Y-%m-%d %H:%M} UTC): its timestamps are misdated (a wrong unit or a "
                f"clock in the wrong year); {limits.hint('ahead_s')}",
                MANIFEST,
            )


def read_bundle(path: str | os.PathLike[str], limits: Limits | None = None) -> Bundle:
    """Read the bundle at `path` (.tar.gz/.tgz file or directory) and verify all of it.

    Raises BundleError, naming the member and the problem, when anything is damaged, unknown,
    hostile or past `limits` (default: `infersight.limits.current()`); nothing is written.
    """
    p = Path(path)
    where = p.name
    if limits is None:
        try:
            limits = current()
        except LimitError as e:
            raise BundleError(str(e)) from None
    members = read_members(p, limits)
    if MANIFEST not in members:
        raise fail(where, "no manifest.json; not an infersight bundle")
    try:
        manifest = parse_manifest(members[MANIFEST], limits.json_depth)
    except ValueError as e:
        raise fail(where, str(e), MANIFEST) from None
    _verify_members(where, manifest, members)
    _check_grid(where, manifest, limits)
    _check_dates(where, manifest, limits)
    windows: dict[str, MetricFrame] = {}
    for name, spec in manifest.windows.items():
        try:
            frame = parquet_to_frame(
                members[spec.file], spec.start, spec.step, spec.n, limits.grid_values
            )
        except ValueError as e:
            raise fail(where, str(e), spec.file) from None
        _check_window(where, manifest, name, frame)
        windows[name] = frame
    artifacts = {
        n[len(ARTIFACTS_DIR) :]: d for n, d in members.items() if n.startswith(ARTIFACTS_DIR)
    }
    size = p.stat().st_size if p.is_file() else sum(len(d) for d in members.values())
    return Bundle(p, manifest, windows, size, artifacts)
