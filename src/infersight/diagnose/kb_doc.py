"""Render docs/rules.md from the knowledge base: `python -m infersight.diagnose.kb_doc`.

Each rule is documented the way Grafana Sift documents a check: inputs, how it works, when it
fires (and what refutes it), what it explains, and what to do.
"""

from __future__ import annotations

from infersight.diagnose.config import DEFAULT_CONFIG as CFG
from infersight.diagnose.kb import Condition, Group, KnowledgeBase, Rule, load_kb
from infersight.diagnose.states.registry import kinds


def _cond(c: Condition) -> str:
    if c.state in ("over_capacity", "within_capacity"):
        word = "above" if c.state == "over_capacity" else "at most"
        share = c.level if c.level is not None else CFG.capacity_share
        factor = c.factor if c.factor is not None else CFG.capacity_margin
        parts = [
            f"`{c.signal}` {c.state.replace('_', ' ')}: {word} {factor:g}× V/M "
            f"(V: {share:.0%} of the card less weights and runtime)"
        ]
        if c.where != "any":
            parts.append(f"on the {c.where} instances")
        if c.min_share > 0:
            parts.append(f"on ≥ {c.min_share:.0%} of instances")
        return " ".join(parts)
    if c.state == "outage":
        return f"`{c.signal}` 0 for ≥ {c.level:g} s, then back (a restart that slow to serve)" + (
            f" on the {c.where} instances" if c.where != "any" else ""
        )
    stat = {"max": " peak", "min": " low"}.get(c.stat, "")
    per = f" per `{c.per}`" if c.per is not None else ""
    parts = [f"`{c.signal}`{per}{stat} {c.state.replace('_', ' ')}"]
    if c.than is not None:
        parts.append(f"`{c.than}`")
    if c.factor is not None:
        parts.append(f"by ≥ {c.factor:g}×")
    if c.delta is not None:
        parts.append(f"by ≥ {c.delta:g}")
    if c.level is not None and c.state in ("trend_up", "trend_down"):
        parts.append(f"running out within {c.level / 3600:g} h")
    elif c.level is not None:
        parts.append(f"{c.level:g}")
    if c.direction is not None:
        parts.append(f"({c.direction})")
    if c.where != "any":
        parts.append(f"on the {c.where} instances")
    if c.when == "together":
        parts.append(f"beginning within {CFG.together_s / 60:g} min of the group's first")
    if c.when == "after":
        parts.append("beginning after the group's first")
    if c.when == "during":
        parts.append("while the group's first change lasts")
    if c.min_share > 0:
        parts.append(f"on ≥ {c.min_share:.0%} of instances")
    if c.max_share < 1:
        parts.append(f"on ≤ {c.max_share:.0%} of instances")
    return " ".join(parts)


def _group(g: Group, depth: int = 0) -> list[str]:
    pad = "  " * depth
    head = "all of" if g.mode == "all" else "any of"
    out = [f"{pad}- {head}:"]
    for m in g.members:
        if isinstance(m, Condition):
            out.append(f"{pad}  - {_cond(m)}")
        else:
            out.extend(_group(m, depth + 1))
    return out


def _on_path(r: Rule) -> str:
    """Where on the request path the rule names the walk's ends (docs/path.md), "" for a
    symptom."""
    if r.kind == "forecast":
        return (
            "A symptom to come, never a root: the request-path walk starts from its evidence, "
            "so what grows toward it is named (docs/path.md)."
        )
    if r.kind != "cause":
        return ""
    parts = ["any part" if p == "instance" else f"the `{p}`" for p in r.at if p != "hop"]
    pieces = [" or ".join(parts) + " of the instances its evidence names"] if parts else []
    if "hop" in r.at:
        pieces.append("the hop between the gateway and the engines")
    where = ", or ".join(pieces) or "the nodes of its own evidence"
    sig = ", ".join(f"`{x}`" for x in r.signals)
    if len(r.signals) > 1:
        sig = f"one of {sig}"
    text = f"Names the request-path walk's end at {where}" + (
        f", where {sig} changed unexplained (its signature)." if sig else "."
    )
    if r.under_load:
        text += (
            " A limit (`under_load`): where a root's work piled up against it, it is named "
            "beside that root."
        )
    if r.takes_out:
        text += (
            " It takes replicas out (`takes_out`): a remedy advised on their peers meanwhile "
            "says first that they carry the share (`diagnose/carrying.py`)."
        )
    return text + " See docs/path.md."


def render_rule(r: Rule, origin: str) -> str:
    lines = [f"### `{r.id}` — {r.title}", ""]
    lines.append(f"*{r.kind}, {r.layer} layer, seed §{r.seed}; from `{origin}`*")
    lines += ["", f"**How it works.** {r.description.strip() or r.title}", ""]
    lines.append("**Inputs.** " + ", ".join(f"`{s}`" for s in r.condition_signals()))
    lines += ["", "**When it fires (confirmed).**", "", *_group(r.confirm)]
    if r.refute is not None:
        lines += ["", "**Refuted when.**", "", *_group(r.refute)]
    lines += [
        "",
        "**Missing data.** A condition on a signal the data lacks is unknown, never normal.",
    ]
    if r.requires:
        need = "; ".join(" or ".join(f"`{a}`" for a in alts) for alts in r.needs())
        lines[-1] += (
            f" It cannot be decided at all without: {need}. A prediction on any other signal "
            "the data lacks altogether is a gap: the rule is confirmed on what could be "
            "checked, at a lower confidence, and names it."
        )
    else:
        lines[-1] += " The rule is then inconclusive and names the signals."
    where = _on_path(r)
    if where:
        lines += ["", f"**On the request path.** {where}"]
    if r.explains:
        lines += ["", "**Explains.** " + ", ".join(f"`{e}`" for e in r.explains)]
    if r.remedy:
        lines += ["", f"**Remedy.** {r.remedy}"]
    if r.runbook:
        lines += ["", f"**Runbook.** `{r.runbook}`"]
    if r.checks:
        lines += ["", "**Settings / to enable.**", ""]
        lines += [f"- `{s}`: {how}" for s, how in r.checks.items()]
    return "\n".join(lines)


def render(kb: KnowledgeBase | None = None) -> str:
    kb = kb or load_kb()
    out = [
        "# Diagnostic rules",
        "",
        "Generated from `src/infersight/diagnose/rules/*.yaml` by "
        "`python -m infersight.diagnose.kb_doc > docs/rules.md`; do not edit by hand.",
        "",
        "**How evidence is weighed.** Each rule is a set of predictions of one mechanism, "
        "written from the field guide and the vendors' documentation, not fitted to a miss: "
        "what must change and which way, what must stay put, where (the same instances, their "
        "peers, up or down the request path) and when. A cause is confirmed when its "
        "predictions hold and refuted by one that fails (shown as the reason it was ruled "
        "out); a prediction on a missing signal is unknown, never held: where the signal is "
        "absent from the data altogether (an exporter not deployed, a metric dropped by "
        "relabelling) and the rule does not require it, the prediction is a gap, named with "
        "the verdict, and the cause holds on what could be checked at a confidence lowered "
        "by the share left unchecked. The direction of a "
        "change against the same window an hour and a day earlier and against the peers is "
        "the primary evidence; a vendor's level (80 °C, a KV cache at 90%) supports it, and "
        "is read where the mechanism needs it (a KV cache limits admission only where it ran "
        "out of blocks at its peak). Each latency says who timed it (`measured_at` in "
        "`catalog/signals.yaml`): time lost on the wire or in a hop without metrics shows "
        "only in a client's figure (the gateway's), and `adds` places it on the request "
        "path. Slow climbs read across the hour and the day before give precursors: a "
        "resource running out within a day is reported before any symptom.",
        "",
        "Conditions: " + "; ".join(k.doc(CFG) for k in kinds()) + ". `peak`/`low`: the highest "
        "or lowest reading since the onset, not the median. `same`: on the "
        "instances the group's first condition matched; `other`: on the rest; "
        "`when: together`: the change began "
        f"within {CFG.together_s / 60:g} min of the one the group's first condition found on that "
        "instance (a second process brings its memory and its slowdown at once) — an anchor "
        "already there at the window's first point began at an unknown time and is not "
        "apart from anything; `when: after`: the same, and it began no earlier than that "
        "change, less one grid step (a crash from an OOM follows the memory filling); "
        "`when: during`: a median level (or a `rose`/`fell` shift) "
        "read since the change the group's first condition found on that instance began, "
        "when that was after the incident's onset (GPUs saturated while the surge lasts, "
        "however early a precursor dated the incident; requests slower since the disk got "
        "busy). A peak or "
        "dip past a level (`above` with `stat: max`, `below` with `min`) that had been crossed "
        "before the onset too, after a time on the normal side, is dated by its first "
        "crossing. Users add rules with "
        "`load_kb([folder])`.",
        "",
        "A peak or dip that must have happened (`stat: max` with up/above, `min` with "
        "down/below) on a signal some mapping computes from counters leaves out the samples up "
        f"to {CFG.settle_s / 60:g} min after the target was down: the rate of a counter that "
        "restarted and outgrew its old value before the next scrape hides the reset, and a "
        "ratio of such rates (a mean batch size) can read far past anything that happened. With "
        "nothing else left the condition is undecidable, not false.",
        "",
        "Causes are linked by **Explains** only in time order: a cause that began more than "
        f"{CFG.late_s / 60:g} min after what it would explain does not explain it. An inconclusive "
        "cause that cannot be decided on the data (its required signals are missing) and would "
        "explain a "
        "root is reported as a possible upstream cause that could not be checked, with the "
        "signal to add.",
        "",
        "**Adding a condition kind.** Write one module in `diagnose/states/` that names the "
        "`STATES` it reads, the options it `ACCEPTS` (factor, level, `than`, …), its `read(ctx, "
        "condition, instance, shown, since)` returning a `Reading` (holds, evidence, onset, "
        "score), its `doc(config)` line for this page and, where a condition of its kind must "
        "carry something, a `check(condition)`; and its test. The registry "
        "(`diagnose/states/registry.py`) finds it: the knowledge base accepts its states and "
        "this page lists it. A constant it needs goes in `DiagnoseConfig` "
        "(`diagnose/config.py`) with the reason for its default.",
    ]
    for kind, title in (("cause", "Causes"), ("symptom", "Symptoms"), ("forecast", "Forecasts")):
        out += ["", f"## {title}"]
        for r in kb.in_layer_order():
            if r.kind == kind:
                out += ["", render_rule(r, kb.origins[r.id])]
    return "\n".join(out) + "\n"


def main() -> None:
    print(render(), end="")


if __name__ == "__main__":
    main()
