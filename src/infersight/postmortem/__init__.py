"""The postmortem library (seed §6.3): blameless drafts from a diagnosis, kept as Markdown files
with YAML front matter in a folder (the source of truth, friendly to git), searched through a
SQLite FTS5 index rebuilt from them, and compared by what the incidents looked like (root
causes, signals, onset order, figures, layers), not only by their words.

    incident = load_incident("report.json" | "scene.tar.gz")     # inputs.py
    entry, problems = new(incident, "postmortems/")                # draft.py + library.py
    hits, lib, index = search("postmortems/", "vector swap", 10)   # index.py, sections.py
    matches = similar(diagnosis, scan("postmortems/"))             # signature.py + similar.py
    seen, problems = seen_before(diagnosis, "postmortems/")        # for the reports
"""

from infersight.postmortem.config import PostmortemConfig, SimilarityWeights
from infersight.postmortem.frontmatter import FrontMatter, FrontMatterError
from infersight.postmortem.history import Match, new, search, seen_before, similar
from infersight.postmortem.index import Hit, Index
from infersight.postmortem.inputs import Incident, InputError, load_incident, read_audit
from infersight.postmortem.library import Entry, LibraryError, Problem, Scan, add, scan

__all__ = [
    "Entry",
    "FrontMatter",
    "FrontMatterError",
    "Hit",
    "Incident",
    "Index",
    "InputError",
    "LibraryError",
    "Match",
    "PostmortemConfig",
    "Problem",
    "Scan",
    "SimilarityWeights",
    "add",
    "load_incident",
    "new",
    "read_audit",
    "scan",
    "search",
    "seen_before",
    "similar",
]
