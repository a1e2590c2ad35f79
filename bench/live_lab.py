"""Fault → diagnosis on the live lab: each fault injected under steady load, checked in
Prometheus, then `infersight diagnose` run on the lab's Prometheus; what it named is recorded
against the ground truth, misses included.

    .venv/bin/python -m bench.live_lab --replicas 2 --rate 6 --write

One lab serves every fault in turn: a clean warm-up, then per fault: inject, hold under load,
query Prometheus for the fault's own signature, diagnose, clear, let it recover. The lab is
always torn down at the end.

The diagnosis window holds the fault and the clean minutes before it, and nothing of the fault
before: the quiet time since the last clear (or the warm-up), less one rate window (a rate
still carries what happened that long ago) and a settling margin. Rates are taken over
`--rate-window` (1m: twelve 5 s scrapes), since a 5m rate would spread a 100 s fault over
five minutes.
"""

from __future__ import annotations

import argparse
import json
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from bench._live_signatures import SIGNATURES
from bench.report import write_section
from infersight.lab.engine import find
from infersight.lab.live import engine_faults, faults, stack


def applicable(engine: str) -> list[str]:
    """The faults a lab with this engine can take: the engine's own only with a real engine,
    the stand-in's batch window only with the stand-in."""
    own = set(engine_faults.NAMES)
    if engine == "vllm":
        return [f for f in faults.FAULTS if f != "batch-delay"]
    return [f for f in faults.FAULTS if f not in own]


def _seen(value: float | None, test: str) -> bool:
    if value is None:
        return False
    op, ref = test.split()
    r = float(ref)
    return {"<=": value <= r, ">=": value >= r, "==": value == r, ">": value > r, "<": value < r}[
        op
    ]


_AUTO_WINDOW = (
    "the fault from its injection to the diagnosis and the quiet time before it, less one rate "
    "window and 30 s"
)


def _seconds(duration: str) -> float:
    from infersight.timeparse import parse_duration

    return parse_duration(duration)


def query(prom: str, expr: str) -> float | None:
    with httpx.Client(timeout=10.0, trust_env=False) as http:
        data = http.get(prom + "/api/v1/query", params={"query": expr}).json()
    result = data.get("data", {}).get("result", [])
    return float(result[0]["value"][1]) if result else None


@dataclass
class Row:
    fault: str
    target: str
    expected: list[str]
    signature: str
    value: float | None
    seen: bool
    named: list[str]
    hit: bool
    command: str
    window: str = ""

    @property
    def first(self) -> bool:
        """The first root named is one the fault expects."""
        return bool(self.named) and self.named[0].split("@")[0] in self.expected


def _cli() -> str:
    return str(Path(sys.executable).with_name("infersight"))


#: seconds of a quiet period left out after a clear or the lab's start, beyond one rate
#: window: queues drain and caches refill
SETTLE_S = 30


#: the least clean time a window holds before its fault: the baseline it is judged against
MIN_LEAD_S = 60.0


def quiet_needed(rate_window_s: float) -> float:
    """Quiet seconds after a clear before the next injection, so that the next window's lead
    holds nothing of the last fault: a rate still carries it one rate window on."""
    return MIN_LEAD_S + rate_window_s + SETTLE_S


def window_for(quiet_s: float, fault_s: float, rate_window_s: float) -> str:
    """The diagnosis window: the fault from its injection on (a redeploy's own restarts
    included) and the clean time before it, at least `MIN_LEAD_S` of it (the runner waits
    `quiet_needed` after each clear)."""
    lead = max(MIN_LEAD_S, quiet_s - rate_window_s - SETTLE_S)
    return f"{int(lead + fault_s)}s"


#: after `engine-restart`, once the engine answers again: the window holds its return
BACK_S = 60.0


def capture(prom: str, window: str, rate_window: str, step: str, at: str, out: Path) -> None:
    """The fault's window frozen as a bundle (as tests/diagnose/lab_incidents/ holds), ending
    where the diagnosis's did (a capture 20 s later cut 20 s off the clean lead)."""
    cmd = [_cli(), "capture", "-p", prom, "--window", window, "--rate-window", rate_window]
    cmd += ["--step", step, "--at", at]
    cmd += ["--baselines", "none", "-o", str(out)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300, check=False)
    # its exit status is the scene's verdict (0, 1, 3); only a missing bundle is a failure
    if not out.is_file():
        print(f"  capture failed ({done.returncode}): {done.stderr.strip()[:200]}", flush=True)


def _at_now() -> str:
    """This moment as `--at` takes it: the diagnosis and the bundle read the same window."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def diagnose(
    prom: str, window: str, rate_window: str, step: str, at: str, keep: Path | None = None
) -> tuple[list[str], str]:
    cmd = [_cli(), "diagnose", "-p", prom, "--window", window, "--rate-window", rate_window]
    cmd += ["--step", step, "--at", at]
    cmd += ["--format", "json"]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=300, check=False)
    if keep is not None:  # the whole answer, as evidence for a miss
        keep.write_text(out.stdout or out.stderr)
    named: list[str] = []
    try:
        d: dict[str, Any] = json.loads(out.stdout)
    except ValueError:
        return [f"(no JSON: exit {out.returncode}: {out.stderr.strip()[:120]})"], " ".join(cmd)
    for rc in d.get("root_causes", []):
        h = rc.get("hypothesis")
        hid = h.get("id") if isinstance(h, dict) else h
        inst = ""
        if isinstance(h, dict) and h.get("instances"):
            inst = "@" + ",".join(map(str, h["instances"]))
        named.append(f"{hid}{inst}")
    if not named:
        named = ["(healthy)" if d.get("healthy") else "(no root named)"]
    return named, " ".join(cmd)


def run_isolated(args: argparse.Namespace) -> list[Row]:
    """A fresh lab per fault: no earlier fault's tail in the diagnosis window."""
    rows: list[Row] = []
    for name in args.faults:
        one = argparse.Namespace(**{**vars(args), "faults": [name], "recover": 0})
        rows += run(one)
    return rows


def run(args: argparse.Namespace) -> list[Row]:
    lab_dir = Path(tempfile.mkdtemp(prefix="infersight-live-bench-"))
    rows: list[Row] = []
    lab = stack.up(
        lab_dir,
        args.replicas,
        progress=lambda m: print("·", m, flush=True),
        engine=find() if args.engine == "vllm" else None,
        api_cpus=args.api_cpus,
    )
    holds = {n: max(float(args.hold), faults.FAULTS[n].min_hold_s) for n in args.faults}
    # the load outlives every fault (a redeploy takes minutes under it); it is stopped at the end
    total_s = 6 * 3600
    load = subprocess.Popen(
        [
            _cli(),
            "lab",
            "load",
            "--dir",
            str(lab_dir),
            "--rate",
            str(args.rate),
            "--duration",
            f"{int(total_s)}s",
        ],
        stdout=subprocess.DEVNULL,
    )
    try:
        quiet = max(float(args.warmup), quiet_needed(_seconds(args.rate_window)))
        print(f"warm-up {quiet:g}s", flush=True)
        time.sleep(quiet)
        for name in args.faults:
            spec = faults.FAULTS[name]
            r = args.replica
            began = time.monotonic()
            truth = faults.inject(lab, name, replica=r)
            print(f"{name}: injected on {truth['target']}", flush=True)
            time.sleep(holds[name])
            if name == engine_faults.RESTART:  # the restart's load is the fault: see it end
                stack.wait_ready(stack.Lab.load(lab_dir), f"engine-{r}")
                time.sleep(BACK_S)
            expr, test = SIGNATURES[name]
            expr = expr.replace("{r}", str(r))
            value = query(lab.prometheus_url, expr)
            keep = None
            if args.keep is not None:
                args.keep.mkdir(parents=True, exist_ok=True)
                keep = args.keep / f"{name}.json"
            fault_s = time.monotonic() - began
            window = args.window or window_for(quiet, fault_s, _seconds(args.rate_window))
            at = _at_now()
            named, cmd = diagnose(lab.prometheus_url, window, args.rate_window, args.step, at, keep)
            if args.bundles is not None:
                args.bundles.mkdir(parents=True, exist_ok=True)
                out = args.bundles / f"{name}.tar.gz"
                capture(lab.prometheus_url, window, args.rate_window, args.step, at, out)
            hit = any(n.split("@")[0] in spec.expected for n in named)
            rows.append(
                Row(
                    name,
                    truth["target"],
                    list(spec.expected),
                    f"{expr} {test}",
                    value,
                    _seen(value, test),
                    named,
                    hit,
                    cmd,
                    window,
                )
            )
            print(f"  seen={rows[-1].seen} ({value}) named={named} hit={hit}", flush=True)
            faults.clear(stack.Lab.load(lab_dir))
            lab = stack.Lab.load(lab_dir)
            # never less than the next window's lead needs: with less, its baseline held
            # the tail of this fault (a 45 s recovery left the 60 s lead 15 s of it and a
            # minute of its rates)
            quiet = max(float(args.recover), quiet_needed(_seconds(args.rate_window)))
            time.sleep(quiet)
    finally:
        try:
            load.terminate()
            try:
                load.wait(10)
            except subprocess.TimeoutExpired:
                load.kill()
                load.wait()
        finally:
            stack.down(lab_dir)
    return rows


def _longer(args: argparse.Namespace) -> str:
    """The faults held longer than --hold, to do what defines them."""
    longer = [
        f"{n} {faults.FAULTS[n].min_hold_s:g} s"
        for n in args.faults
        if faults.FAULTS[n].min_hold_s > args.hold
    ]
    return f" ({', '.join(longer)}: the time it needs to do what defines it)" if longer else ""


def table(rows: list[Row], args: argparse.Namespace) -> str:
    lines = [
        f"{args.replicas} replicas, {args.rate:g} requests/s open loop through HAProxy, "
        f"Prometheus scraping every 5 s; warm-up {args.warmup} s, each fault held "
        f"{args.hold} s{_longer(args)}, then `infersight diagnose -p PROM --window W --rate-window "
        f"{args.rate_window} --step {args.step} --format json` (W: {args.window or _AUTO_WINDOW}), "
        "then cleared"
        + (
            "; a fresh lab for every fault. "
            if args.isolated
            else f" with {max(args.recover, quiet_needed(_seconds(args.rate_window))):g} s to "
            "recover (the next window's clean lead and one rate window), the next fault on the "
            "same lab. "
        )
        + "gpu-* faults change "
        "the GPU stand-in's modelled card; every other fault changes real software.",
        "",
        "| fault | where | window | seen in Prometheus (value) | expected | diagnosis named "
        "| hit | first |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        v = "-" if r.value is None else f"{r.value:.3g}"
        lines.append(
            f"| {r.fault} | {r.target} | {r.window} | {'yes' if r.seen else 'no'} ({v}) | "
            f"{', '.join(r.expected)} | {', '.join(r.named)} | {'yes' if r.hit else '**no**'} "
            f"| {'yes' if r.first else '**no**'} |"
        )
    hits = sum(r.hit for r in rows)
    firsts = sum(r.first for r in rows)
    seen = sum(r.seen for r in rows)
    lines += [
        "",
        f"Seen in Prometheus: {seen}/{len(rows)}. Named by diagnose (root cause or the right "
        f"layer's hypothesis): {hits}/{len(rows)}; named first: {firsts}/{len(rows)}. The window "
        "runs from the clean minutes before each injection to the diagnosis, so a redeploy's "
        "restarts are in it. A lab only minutes old has no hour-ago or "
        "day-ago baseline, so the engine compares against the window's own clean minutes.",
        "",
        "Signatures checked in Prometheus:",
        "",
    ]
    lines += [f"- {r.fault}: `{r.signature}`" for r in rows]
    return "\n".join(lines)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--replicas", type=int, default=2)
    p.add_argument("--replica", type=int, default=0)
    p.add_argument("--rate", type=float, default=6.0)
    p.add_argument(
        "--api-cpus",
        type=float,
        default=1.0,
        help="lab up's --api-cpus: the API's CPU limit (0.1 binds at 6 requests/s)",
    )
    p.add_argument("--warmup", type=int, default=150)
    p.add_argument("--hold", type=int, default=90)
    p.add_argument("--recover", type=int, default=45)
    p.add_argument(
        "--window", default=None, help="Diagnosis window (default: " + _AUTO_WINDOW + ")"
    )
    p.add_argument("--rate-window", default="1m", help="diagnose's --rate-window")
    p.add_argument(
        "--step",
        default="15s",
        help="diagnose's --step (the lab scrapes every 5 s: 5s reads a minute's baseline as "
        "12 points, 15s as 4)",
    )
    p.add_argument(
        "--engine",
        choices=("standin", "vllm"),
        default="standin",
        help="What serves the model (vllm: `infersight lab engine setup` first)",
    )
    p.add_argument("--faults", nargs="+", default=None, help="Default: every one that applies")
    p.add_argument("--write", action="store_true", help="Write the section of docs/benchmarks.md")
    p.add_argument("--section", default="live_lab", help="Its name (one per set of faults)")
    p.add_argument("--keep", type=Path, help="Keep each diagnosis (JSON) in this folder")
    p.add_argument(
        "--bundles", type=Path, help="Capture each fault's window as a bundle in this folder"
    )
    p.add_argument(
        "--isolated", action="store_true", help="A fresh lab per fault (slower, no carry-over)"
    )
    args = p.parse_args()
    fits = applicable(args.engine)
    args.faults = args.faults or fits
    bad = [f for f in args.faults if f not in fits]
    if bad:
        p.error(f"faults that do not apply with --engine {args.engine}: {', '.join(bad)}")
    # SIGTERM unwinds like Ctrl-C, so the lab is torn down by run()'s finally block
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    rows = run_isolated(args) if args.isolated else run(args)
    body = table(rows, args)
    print(body)
    if args.write:
        cmd = "python -m bench.live_lab " + " ".join(sys.argv[1:])
        title = "Live lab: fault → diagnosis" + (
            "" if args.section == "live_lab" else f" ({', '.join(args.faults)})"
        )
        write_section(args.section, title, cmd, body)


if __name__ == "__main__":
    main()
