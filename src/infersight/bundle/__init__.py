"""Evidence bundles: one file to attach to a ticket, from which every analysis runs as live.

Layout (a `.tar.gz`/`.tgz` file, or a plain directory holding the same members)::

    manifest.json              schema_version 2, created_at (UTC), source {kind, ...},
                               windows {name: {start, end, step, file}} ("incident" is the main
                               one; e.g. "baseline-1d" for later baselines), signals, instances,
                               missing {signal: reason}, members {path: sha256}, notes,
                               queries {window: {rate_window, start, end, step,
                               signals {signal: [{family, expr}]}}} (the PromQL as sent;
                               version 2; version 1 bundles, without it, are read too)
    metrics/<window>.parquet   long form: ts float64, signal dict<string>,
                               instance dict<string>, value float64 (zstd)
    artifacts/<name>           thread stacks, logs, nvidia-smi output, the diagnosis, ...

API::

    write_bundle(path, windows: dict[str, MetricFrame], source: dict[str, str],
                 missing=None, artifacts: dict[str, bytes] | None = None, notes=None,
                 *, overwrite=False, queries: dict[str, list[QueryRun]] | None = None)
        -> Path
    read_bundle(path, limits=Limits()) -> Bundle
        Bundle.manifest, .windows, .frame (incident), .missing, .artifact_names(),
        .read_artifact(name) -> bytes, .size, .runs (the incident window's QueryRuns)
    summarize(bundle) -> BundleSummary   (frozen; .to_dict())

Writing is atomic (temp name in the same directory, fsync, rename) and never clobbers an
existing target unless asked. Reading verifies everything (schema version, manifest schema,
sha256 of every member, no unlisted members, Parquet columns and types, points on the declared
grid, known canonical signals) and never extracts anything to disk; any problem raises
BundleError with one line naming the member and what is wrong.
"""

from infersight.bundle.errors import BundleError
from infersight.bundle.manifest import INCIDENT, SCHEMA_VERSION, Manifest, WindowSpec
from infersight.bundle.read import Bundle, read_bundle
from infersight.bundle.summary import BundleSummary, WindowSummary, summarize
from infersight.bundle.write import check_target, write_bundle
from infersight.limits import Limits

__all__ = [
    "INCIDENT",
    "SCHEMA_VERSION",
    "Bundle",
    "BundleError",
    "BundleSummary",
    "Limits",
    "Manifest",
    "WindowSpec",
    "WindowSummary",
    "check_target",
    "read_bundle",
    "summarize",
    "write_bundle",
]
