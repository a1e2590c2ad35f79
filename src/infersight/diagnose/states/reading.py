"""What a condition kind reads on one instance."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from infersight.diagnose.context import Context
from infersight.diagnose.kb import Condition
from infersight.diagnose.result import Evidence


@dataclass(frozen=True)
class Reading:
    """One condition on one instance. `evidence`: what was seen (where it does not hold, the
    contrary sign a `normal` found, else None); `onset`: when the change began, None for a
    state that dates nothing (a slope, a capacity); `score`: its strength for
    `rank.confidence` (a scored anomaly's own score, else one of `DiagnoseConfig`'s);
    `partial`: held only part of the way (weak support in a confirm, nothing in a refute)."""

    holds: bool
    evidence: Evidence | None = None
    onset: float | None = None
    score: float = 0.0
    partial: bool = False


#: the condition does not hold and there is nothing to show for it
NOT_HELD = Reading(False)


class Reader(Protocol):
    """`read` of a condition kind. `shown` False: a `normal` that holds needs no evidence (it
    will not be reported); `since`: a median level or shift read since then (`when: during`),
    not since the incident's onset."""

    def __call__(
        self, ctx: Context, c: Condition, inst: str, shown: bool, since: float | None
    ) -> Reading: ...
