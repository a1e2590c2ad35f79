"""The HTML report's small parts shared by its sections: text made safe, a fold the reader
opens, and the cell that shows the queries a finding's series came from, with their links."""

from __future__ import annotations

from dataclasses import dataclass
from html import escape

from infersight.report.links import CATALOG_NOTE, Links, Query, link_set
from infersight.report.textsafe import clean


def e(text: object) -> str:
    """Text from data, safe inside HTML and its attributes."""
    return escape(clean(text), quote=True)


#: what a closed part says it holds, next to its marker (hidden once open)
OPEN_HINT = "click to open"


def fold(cls: str, head: str, body: str, hint: str = OPEN_HINT, tail: str = "",
         opened: bool = False) -> str:  # fmt: skip
    """A part the reader opens: <details> (its <summary> takes the keyboard's focus and opens
    with Enter or Space), with a visible marker (▸, turned to ▾ when open) and a hint of what
    opening shows; `tail` follows the hint inside the summary."""
    marker = "<span class='marker' aria-hidden='true'>▸</span>"
    tip = f"<span class='hint'>{e(hint)}</span>" if hint else ""
    attr = " open" if opened else ""
    return (
        f"<details class='{cls}'{attr}><summary>{marker}{head}{tip}{tail}</summary>{body}</details>"
    )


@dataclass(frozen=True)
class QueryCells:
    """What every finding's query cell needs: the queries per signal and the links."""

    queries: dict[str, tuple[Query, ...]]
    links: Links | None


def _one_query(q: Query, links: Links | None, several: bool) -> str:
    urls = link_set(q, links)
    tag = f" · {q.family}" if several else ""
    anchors = " ".join(
        f"<a class='ql' href='{e(url)}' rel='noreferrer'>{e(name.capitalize() + tag)}</a>"
        for name, url in urls.items()
    )
    how = f"{q.family} · rate window {q.rate_window} · step {q.step:g} s"
    note = "" if q.as_run else f"<small class='missing'>{e(CATALOG_NOTE)}</small>"
    code = f"<code>{e(q.expr)}</code><small>{e(how)}</small>{note}"
    return anchors + fold("promql", f"PromQL{e(tag)}", code, hint="")


def query_cell(ctx: QueryCells | None, signal: str) -> str:
    """The PromQL a finding's series came from (one per family that fed it), folded, with its
    links."""
    qs = ctx.queries.get(signal, ()) if ctx is not None else ()
    if ctx is None or not qs:
        return "—"
    return "".join(_one_query(q, ctx.links, len(qs) > 1) for q in qs)
