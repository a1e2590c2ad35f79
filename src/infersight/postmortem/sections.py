"""A postmortem's body cut into what the search weighs apart: the symptoms, the text about other
causes (those ruled out, and the past incidents it resembled), and the rest.

Every draft lists every cause the diagnosis ruled out, so a word there says what the incident
was *not*; searched like the rest, any cause's name matched every postmortem. The sections are
found by their `## ` headings (the draft's own, matched without regard to case, so a file
edited by hand keeps its sections as long as it keeps the headings).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: the draft's headings (draft.py writes them; the index reads them back)
SYMPTOMS = "Symptoms"
RULED_OUT = "Investigation: what was ruled out, and why"
SEEN_BEFORE = "Seen before"
#: inside the investigation: the changes that did happen, which no known cause explains
UNEXPLAINED = "Changes no known cause explains:"

_HEADING = re.compile(r"^##\s+(.*?)\s*$")


@dataclass(frozen=True)
class Sections:
    symptoms: str
    #: causes ruled out or not checkable, and the past incidents it was like
    ruled_out: str
    #: everything else but the `# ` title line: summary, timeline, root causes, remediation
    body: str


def _kind(heading: str) -> str:
    h = heading.casefold()
    if h == SYMPTOMS.casefold():
        return "symptoms"
    if h.startswith("investigation") or h.startswith(SEEN_BEFORE.casefold()):
        return "ruled_out"
    return "body"


def split(body: str) -> Sections:
    """The body's lines sorted into symptoms, ruled-out and the rest, in their order."""
    parts: dict[str, list[str]] = {"symptoms": [], "ruled_out": [], "body": []}
    kind = "body"
    for line in body.splitlines():
        if line.startswith("# "):
            continue  # the title, indexed on its own
        m = _HEADING.match(line)
        if m is not None:
            kind = _kind(m.group(1))
        elif kind == "ruled_out" and line.strip() == UNEXPLAINED:
            kind = "body"  # what did change belongs to the incident, not to what it was not
        parts[kind].append(line)
    return Sections(*("\n".join(parts[k]).strip() for k in ("symptoms", "ruled_out", "body")))
