"""Past incidents like this one, as each report format shows them ("seen before: …").

The postmortem library finds them (`infersight.postmortem.seen_before`); a report only reads
this small record, so the reports know nothing of the library's files or index.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from html import escape
from typing import Any


@dataclass(frozen=True)
class PastIncident:
    id: str
    date: str  # the day it began, YYYY-MM-DD
    title: str
    fixed_by: str  # "" while nobody has written it down
    score: float  # similarity 0..1
    why: tuple[str, ...] = ()
    path: str = ""
    status: str = ""

    def line(self) -> str:
        """ "seen before: 2026-03-14, vector DB out of memory, fixed by more RAM (…)" """
        fix = f"fixed by {self.fixed_by}" if self.fixed_by else "fix not recorded"
        why = f"; {'; '.join(self.why)}" if self.why else ""
        return (
            f"seen before: {self.date}, {self.title}, {fix} "
            f"({self.id}, similarity {self.score:.2f}{why})"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "date": self.date,
            "title": self.title,
            "fixed_by": self.fixed_by,
            "score": round(self.score, 3),
            "why": list(self.why),
            "path": self.path,
            "status": self.status,
        }


def lines(seen: Sequence[PastIncident] | None) -> list[str]:
    """One line per past incident; a line saying none was found when a library was searched."""
    if seen is None:
        return []
    if not seen:
        return ["seen before: nothing similar in the postmortem library"]
    return [p.line() for p in seen]


def html_section(seen: Sequence[PastIncident] | None) -> str:
    if seen is None:
        return ""
    items = "".join(f"<li>{escape(line)}</li>" for line in lines(seen))
    return f'<section id="seen-before"><h2>Seen before</h2><ul>{items}</ul></section>'
