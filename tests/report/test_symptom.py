"""The symptom is what users felt (issue 39): the user-facing signal that moved most, a gateway's
first, with its figures and where; its plot shows the change in proportion."""

from __future__ import annotations

import re
from dataclasses import replace

import numpy as np
from report_samples import END, ONSET, START, STEP, N, ev, hyp, incident

from infersight.diagnose.result import Diagnosis, RootCause
from infersight.frame import MetricFrame, SignalSeries
from infersight.report import render_html, render_markdown, render_text
from infersight.report.firstscreen import first_screen
from infersight.report.symptom import felt
from infersight.report.timeline import Panel, value_range

ENGINES = ("node-0", "node-1", "node-2")


def _scope(gateway_bad: bool = True, engines_bad: tuple[str, ...] = ()) -> dict[str, object]:
    def sig(name: str, n: int, bad: tuple[str, ...], observed: float | None) -> dict[str, object]:
        return {"signal": name, "instances": n, "anomalous": list(bad), "observed": observed}

    return {
        "requests": "part", "timing": "continuous", "instances": "unknown",
        "anomalous_instances": ["ingress-0", *engines_bad], "total_instances": 3,
        "signals": [
            sig("service.e2e_latency_p99", 3, engines_bad, 0.9 if engines_bad else None),
            sig("service.error_ratio", 3, (), None),
            sig("access.request_latency_p99", 1, ("ingress-0",) if gateway_bad else (), 0.8),
        ],
    }  # fmt: skip


def gateway_doubled(engines_bad: tuple[str, ...] = ()) -> Diagnosis:
    """ingress-0's P99 400 ms → 800 ms; the engines' P99 flat at 300 ms (or up on some)."""
    gateway = hyp(
        "gateway_fault", "The gateway itself is slow or failing", "access", "confirmed", 0.6,
        ev("access.request_latency_p99", "ingress-0", "Gateway P99 rose from 400 ms to 800 ms",
           0.4, 0.8, "s", onset=ONSET),
        onset=ONSET, instances=("ingress-0",), is_root=True,
    )  # fmt: skip
    flat = hyp(
        "service_hop_slow", "The service is slow", "service", "refuted", 0.0,
        *(ev("service.e2e_latency_p99", e, "End-to-end P99 flat at 300 ms", 0.3, 0.303, "s",
             supports=False, kind="normal", onset=None) for e in ENGINES),
    )  # fmt: skip
    engines_up = hyp(
        "queue_backlog", "Requests pile up", "service", "confirmed", 0.7,
        *(ev("service.e2e_latency_p99", e, "End-to-end P99 tripled", 0.3, 0.9, "s")
          for e in engines_bad),
    )  # fmt: skip
    return replace(
        incident(),
        scope=_scope(True, engines_bad),
        root_causes=(RootCause("gateway_fault", 1, 0.6, ("gateway_fault",)),),
        hypotheses=(gateway, flat, engines_up),
        unexplained=(),
        unchecked_causes=(),
    )


def _windows() -> dict[str, MetricFrame]:
    t = START + STEP * np.arange(N)
    rng = np.random.default_rng(0)
    gateway = np.where(t >= ONSET, 0.8, 0.4) * (1 + 0.01 * rng.standard_normal(N))
    engines = 0.3 * (1 + 0.01 * rng.standard_normal((3, N)))
    series = {
        "access.request_latency_p99": SignalSeries(("ingress-0",), gateway[None, :]),
        "service.e2e_latency_p99": SignalSeries(ENGINES, engines),
    }
    return {"incident": MetricFrame(START, STEP, N, series)}


def test_the_symptom_line_is_the_gateways_doubled_p99_with_its_figures() -> None:
    d = gateway_doubled()
    f = felt(d)
    assert f is not None and f.signal == "access.request_latency_p99"
    line = first_screen(d).symptom
    assert line.startswith("access.request_latency_p99 400 ms → 800 ms (2×) on ingress-0 since ")
    # no count contradicts it: the engines' flat P99 is not the symptom, "0 of 3" is nowhere
    assert "0 of 3" not in line and "anomalous: 1 of 3" not in line
    assert "Symptom: access.request_latency_p99 400 ms → 800 ms" in render_text(d)
    assert "Symptom: access.request\\_latency\\_p99 400 ms → 800 ms" in render_markdown(d)


def test_the_gateway_comes_first_where_it_moved() -> None:
    # the engines' P99 tripled on one node, the gateway's doubled: users feel the gateway's
    d = gateway_doubled(engines_bad=("node-1",))
    f = felt(d)
    assert f is not None and f.signal == "access.request_latency_p99"
    # without a gateway reading, the engines' P99 is what moved
    no_gateway = replace(d, scope=_scope(gateway_bad=False, engines_bad=("node-1",)))
    f = felt(no_gateway)
    assert f is not None and (f.signal, f.instance, f.where) == (
        "service.e2e_latency_p99",
        "node-1",
        ("node-1",),
    )
    assert f.line().startswith("service.e2e_latency_p99 300 ms → 900 ms (3×) on node-1 (1 of 3")


def test_errors_rising_from_none_are_a_move_of_their_size() -> None:
    # 0 → 2% of requests failing (twice the floor of a point of share) against a P99 that
    # tripled: the P99 moved more
    d = gateway_doubled(engines_bad=("node-1",))
    errors = hyp(
        "errors_high",
        "Errors",
        "service",
        "confirmed",
        0.7,
        ev("service.error_ratio", "node-1", "Errors rose", 0.0, 0.02, "ratio"),
    )
    scope = _scope(gateway_bad=False, engines_bad=("node-1",))
    scope["signals"][1]["anomalous"] = ["node-1"]  # type: ignore[index]
    d = replace(d, scope=scope, hypotheses=(*d.hypotheses, errors))
    f = felt(d)
    assert f is not None and f.signal == "service.e2e_latency_p99"


def test_nothing_moved_is_said() -> None:
    d = replace(gateway_doubled(), scope=_scope(gateway_bad=False))
    f = felt(d)
    assert f is not None and not f.moved and f.signal == "access.request_latency_p99"
    assert first_screen(d).symptom.startswith("no user-facing signal moved")


def test_the_plot_is_the_gateways_p99_and_shows_the_change_in_proportion() -> None:
    d = gateway_doubled()
    page = render_html(d, _windows())
    timeline = page[page.index('<svg class="timeline"') :]
    panels = re.findall(r'<g class="panel (\w+)" data-signal="([^"]+)"', timeline)
    assert panels[0] == ("symptom", "access.request_latency_p99")
    title = re.search(r'class="panel-title"[^>]*>([^<]+)<', timeline)
    assert title is not None
    assert (
        title.group(1) == "symptom: access.request_latency_p99 on ingress-0: 400 ms → 800 ms (2×)"
    )
    assert 'class="before"' in timeline  # the level before the change, dashed


def test_a_flat_line_is_not_stretched_into_an_incident() -> None:
    rng = np.random.default_rng(1)
    flat = 0.3 * (1 + 0.01 * rng.standard_normal(N))  # 1% noise around 300 ms
    lo, hi = value_range(Panel("symptom", "service.e2e_latency_p99", "s", (flat,), None,
                               "symptom"))  # fmt: skip
    assert lo == 0.0 and hi >= flat.max()
    assert (flat.max() - flat.min()) / (hi - lo) < 0.1  # noise stays a sliver of the height
    # a doubled line with its level before: the change fills about half the height
    doubled = np.where(np.arange(N) > N // 2, 0.8, 0.4)
    lo, hi = value_range(Panel("symptom", "access.request_latency_p99", "s", (doubled,), None,
                               "symptom", before=0.4))  # fmt: skip
    assert lo == 0.0 and (0.8 - 0.4) / (hi - lo) == 0.5
    assert END > START
