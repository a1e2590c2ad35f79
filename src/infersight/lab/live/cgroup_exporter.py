"""The kernel's CFS counters of the lab's CPU-limited parts, under the names cAdvisor gives them
(the kubelet's `/metrics/cadvisor`), so that throttling in the lab comes from a real kernel.

Each limited part is a cgroup `PREFIX<part>` (`cpu_limit.py`); `/metrics/<part>` reads its
`cpu.stat`: `nr_periods` and `nr_throttled` become `container_cpu_cfs_periods_total` and
`container_cpu_cfs_throttled_periods_total`, the throttled time (`throttled_usec` on cgroup v2,
`throttled_time` in ns on v1) `container_cpu_cfs_throttled_seconds_total`, and v2's `usage_usec`
`container_cpu_usage_seconds_total`, labelled as a pod's container. A part with no limit has no
group and answers no series, as a container without a limit counts no periods (so does every
part where this machine has no cgroup cpu controller: the target answers, empty). Prometheus
scrapes one path per part, labelled with the part's host (`configs.py`).

    python -m infersight.lab.live.cgroup_exporter --port 9500 --prefix infersight-lab-
"""

from __future__ import annotations

import re
from pathlib import Path

from fastapi import FastAPI, HTTPException, Response

from infersight.lab.live import cpu_limit
from infersight.lab.live.service_common import base_args, serve

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
PART = re.compile(r"[a-z0-9-]{1,40}")
#: cAdvisor's name, its help text, and how to read it from cpu.stat (key, scale to the unit)
COUNTERS = (
    (
        "container_cpu_cfs_periods_total",
        "Number of elapsed enforcement period intervals.",
        (("nr_periods", 1.0),),
    ),
    (
        "container_cpu_cfs_throttled_periods_total",
        "Number of throttled period intervals.",
        (("nr_throttled", 1.0),),
    ),
    (
        "container_cpu_cfs_throttled_seconds_total",
        "Total time duration the container has been throttled.",
        (("throttled_usec", 1e-6), ("throttled_time", 1e-9)),
    ),
    (
        "container_cpu_usage_seconds_total",
        "Cumulative cpu time consumed in seconds.",
        (("usage_usec", 1e-6),),
    ),
)


def exposition(part: str, stat: dict[str, int]) -> str:
    """The text format of one container's counters (empty without a group)."""
    if not stat:
        return ""
    labels = f'container="{part}",pod="{part}",namespace="lab"'
    lines = []
    for name, help_text, keys in COUNTERS:
        found = next(((stat[k], scale) for k, scale in keys if k in stat), None)
        if found is None:
            continue
        value, scale = found
        lines += [f"# HELP {name} {help_text}", f"# TYPE {name} counter"]
        lines.append(f"{name}{{{labels}}} {value * scale:.9g}")
    return "\n".join(lines) + "\n"


def group_of(root: Path, prefix: str, part: str) -> cpu_limit.CpuLimit:
    return cpu_limit.CpuLimit(root / f"{prefix}{part}", v2=(root / "cgroup.controllers").exists())


def app(prefix: str, root: Path | None = None) -> FastAPI:
    api = FastAPI()

    def where() -> Path | None:
        if root is not None:
            return root
        try:
            return cpu_limit.controller_root()
        except cpu_limit.CpuLimitUnavailable:
            return None  # no limit can exist: no series, and the target still answers

    async def metrics(part: str) -> Response:
        if not PART.fullmatch(part):
            raise HTTPException(404, "no such part")
        base = where()
        text = exposition(part, group_of(base, prefix, part).stat) if base is not None else ""
        return Response(text, media_type=CONTENT_TYPE)

    async def health() -> dict[str, str]:
        return {"status": "ok"}

    api.add_api_route("/metrics/{part}", metrics, methods=["GET"])
    api.add_api_route("/health", health, methods=["GET"])
    return api


def main() -> None:
    p = base_args("The lab's cgroup CPU counters under cAdvisor's names.")
    p.add_argument("--prefix", required=True, help="the lab's cgroup name prefix")
    args = p.parse_args()
    serve(app(args.prefix), args.port)


if __name__ == "__main__":
    main()
