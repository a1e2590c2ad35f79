"""The 02:17 incident of the field guide (§5), end to end, with no server of the user's.

A simulated fleet of GPU nodes serving an LLM chat API with RAG (vLLM, dcgm-exporter,
node_exporter, redis_exporter, Milvus) runs through a day of normal traffic; at 02:17 the
vector DB outgrows its RAM while the cache no longer holds the working set. The run is exposed
in real exporter metric names and mapped back through the catalog, exactly as a user's data
would be; the scene is frozen into a bundle, then diagnosed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from infersight.diagnose.result import Diagnosis
from infersight.frame import MetricFrame

SCENARIO = "incident_0217"
INSTANCES = 8
HISTORY_H = 25.0  # a day and an hour before the window: yesterday's baseline exists
HOURS = 3.0

Step = Callable[[str], None]
BUNDLE_NAME = "demo-0217.tar.gz"
HTML_NAME = "demo-0217.html"


@dataclass(frozen=True)
class DemoResult:
    bundle: Path
    html: Path
    diagnosis: Diagnosis
    windows: dict[str, MetricFrame]
    truth_roots: tuple[str, ...]


def check_out_dir(out_dir: Path) -> None:
    """Before simulating: the folder exists (it is made if missing) and takes new files, and
    the two outputs in it are absent or replaceable (`safe_write.OutputError` /
    `BundleError` saying why not)."""
    from infersight.bundle import check_target
    from infersight.safe_write import check_folder
    from infersight.safe_write import check_target as check_file

    check_folder(out_dir, create=True)
    check_target(out_dir / BUNDLE_NAME, overwrite=True)
    check_file(out_dir / HTML_NAME)


def run_demo(
    out_dir: Path, seed: int = 217, dialect: str = "vllm", step: Step | None = None
) -> DemoResult:
    from infersight.bundle import read_bundle
    from infersight.diagnose import diagnose
    from infersight.lab.sim.outputs import write_sim_bundle
    from infersight.lab.sim.run import simulate
    from infersight.report import write_report

    say = step or (lambda _msg: None)
    check_out_dir(out_dir)
    say(f"simulating {INSTANCES} GPU nodes, a day of history and the 02:17 incident (seed {seed})")
    res = simulate(SCENARIO, HOURS, INSTANCES, seed, history_h=HISTORY_H)
    say(f"exposing it as {dialect} + dcgm-exporter + node_exporter + redis_exporter + Milvus")
    bundle = write_sim_bundle(res, out_dir / BUNDLE_NAME, dialect, overwrite=True)
    say(f"scene frozen: {bundle}")
    windows = dict(read_bundle(bundle).windows)
    say("diagnosing: scope, then access → service → inference → dependency → infrastructure")
    diagnosis = diagnose(windows, source={"kind": "demo", "scenario": SCENARIO, "seed": str(seed)})
    html = write_report(diagnosis, out_dir / HTML_NAME, "html", windows)
    return DemoResult(bundle, html, diagnosis, windows, res.truth.roots)
