"""The library as the first place to look: write a draft into it, search it, and find the past
incidents most like a diagnosis (what `diagnose --history` links in its reports)."""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from infersight.diagnose.result import Diagnosis
from infersight.postmortem.config import PostmortemConfig
from infersight.postmortem.draft import body, front_matter
from infersight.postmortem.index import Hit, Index
from infersight.postmortem.inputs import Incident
from infersight.postmortem.library import Entry, Problem, Scan, add, scan
from infersight.postmortem.signature import from_diagnosis, from_front_matter
from infersight.postmortem.similar import Similarity, rank
from infersight.report.seen_before import PastIncident


@dataclass(frozen=True)
class Match:
    entry: Entry
    similarity: Similarity

    def to_dict(self) -> dict[str, object]:
        f = self.entry.front
        return {
            "id": f.id,
            "date": f.date.isoformat(),
            "title": f.title,
            "status": f.status,
            "root_causes": list(f.root_causes),
            "fixed_by": f.fixed_by,
            "path": str(self.entry.path),
            **self.similarity.to_dict(),
        }

    def past_incident(self) -> PastIncident:
        f = self.entry.front
        return PastIncident(
            f.id,
            f.date.isoformat(),
            f.title,
            " ".join(f.fixed_by.split()),
            self.similarity.score,
            self.similarity.why,
            str(self.entry.path),
            f.status,
        )


def similar(
    diagnosis: Diagnosis,
    library: Scan,
    cfg: PostmortemConfig | None = None,
    min_score: float | None = None,
    exclude: Sequence[str] = (),
) -> list[Match]:
    """Postmortems in the library most like the diagnosis, best first (`exclude`: ids left out,
    such as the draft of this very incident)."""
    cfg = cfg or PostmortemConfig()
    query = from_diagnosis(diagnosis, cfg)
    candidates = [
        (e, from_front_matter(e.front)) for e in library.entries if e.front.id not in exclude
    ]
    return [Match(e, s) for e, s in rank(query, candidates, cfg, min_score)]


def seen_before(
    diagnosis: Diagnosis, folder: str | os.PathLike[str], cfg: PostmortemConfig | None = None
) -> tuple[tuple[PastIncident, ...], tuple[Problem, ...]]:
    """The few past incidents a report links, and the files that could not be read."""
    cfg = cfg or PostmortemConfig()
    lib = scan(folder, cfg)
    found = similar(diagnosis, lib, cfg)[: cfg.report_top]
    return tuple(m.past_incident() for m in found), lib.problems


def search(
    folder: str | os.PathLike[str],
    text: str,
    limit: int | None,
    cfg: PostmortemConfig | None = None,
) -> tuple[list[Hit], Scan, Index]:
    """Full-text search, best first (`limit` None: every row that matches); the index is
    rebuilt first when the files changed. Rows that hold the words only among the causes
    ruled out come last, marked (`Hit.ruled_out_only`)."""
    cfg = cfg or PostmortemConfig()
    lib = scan(folder, cfg)
    index = Index.open(Path(folder), lib, cfg)
    try:
        return index.search(text, limit), lib, index
    finally:
        index.close()


def new(
    incident: Incident,
    folder: str | os.PathLike[str],
    services: Sequence[str] = (),
    today: dt.date | None = None,
    cfg: PostmortemConfig | None = None,
) -> tuple[Entry, tuple[Problem, ...]]:
    """Write the draft of an incident into the library (a fresh file, never over one); its
    "Seen before" section names the similar postmortems already there."""
    cfg = cfg or PostmortemConfig()
    fm = front_matter(incident, services, today, cfg)
    root = Path(folder)
    lib = scan(root, cfg) if root.is_dir() else Scan((), ())
    seen = [m.past_incident().line() for m in similar(incident.diagnosis, lib, cfg)][
        : cfg.report_top
    ]
    entry = add(root, fm, body(incident, seen), cfg)
    return entry, lib.problems
