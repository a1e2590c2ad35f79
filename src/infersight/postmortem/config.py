"""The postmortem library's settings, each with the reason for its default."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class SimilarityWeights(BaseModel):
    """How much each part of an incident's signature counts; they are normalised to sum 1."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    #: the same root causes is what "the same hole" means (seed §6.3): it weighs most
    root_causes: float = Field(0.45, ge=0)
    #: the signals that moved: two incidents of one cause move the same readings
    signals: float = Field(0.2, ge=0)
    #: which causes and symptoms began first: a cache that failed before the vector DB is a
    #: different story from the reverse, even with the same parts
    onset_order: float = Field(0.15, ge=0)
    #: how far the shared signals moved (40× against 1.3×)
    figures: float = Field(0.1, ge=0)
    #: the layers it showed in: coarse, so it only separates what the rest leaves tied
    layers: float = Field(0.1, ge=0)


class SearchWeights(BaseModel):
    """How much a search word counts by the field it is found in: a row ranks by the sum, over
    the words, of the best field holding each (then by FTS5's bm25 with the same weights)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    #: what the incident was: its title and root causes name it
    title: float = Field(8.0, ge=0)
    root_causes: float = Field(8.0, ge=0)
    #: what users and the fleet showed: the next best account of what happened
    symptoms: float = Field(4.0, ge=0)
    signals: float = Field(3.0, ge=0)
    layers: float = Field(2.0, ge=0)
    services: float = Field(2.0, ge=0)
    #: the timeline, the chain, the remediation, people's notes
    body: float = Field(1.0, ge=0)
    #: what the incident was *not*: every draft lists every cause ruled out, and the past
    #: incidents it resembled, so a word found only here ranks under any word found elsewhere
    ruled_out: float = Field(0.1, ge=0)


class PostmortemConfig(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    weights: SimilarityWeights = SimilarityWeights()
    search: SearchWeights = SearchWeights()
    #: below this a past incident is not "seen before": sharing one symptom (latency up) with
    #: nothing else scores about 0.2, sharing a root cause scores 0.45 or more
    min_score: float = Field(0.35, ge=0, le=1)
    #: past incidents a diagnosis report links: one screen, not a list to wade through
    report_top: int = Field(3, ge=1)
    #: rows `similar` and `search` print by default
    list_top: int = Field(10, ge=1)
    #: a ratio of two readings counted as "the same size of change" within this factor
    #: (log scale): 40× and 80× are alike, 40× and 1.5× are not
    figure_tolerance: float = Field(4.0, gt=1)
    #: a ratio is capped here (a baseline of 0 makes it infinite): 1000× and 10000× are both
    #: "off the scale"
    ratio_cap: float = Field(1000.0, gt=1)
    #: the index, a cache of the Markdown files in the library folder (never the source of
    #: truth; git ignores it through the folder's .gitignore)
    index_name: str = ".postmortem-index.sqlite"
    #: a postmortem past this size is refused as damaged, not read into memory
    max_file_bytes: int = Field(2_000_000, ge=1024)
    #: attempts at a free id when writers race for the same one (each loser takes the next
    #: suffix): far more than writers that ever start within the same second
    max_id_attempts: int = Field(1000, ge=1)
    #: signals of one incident kept in the signature: the strongest readings, enough to tell
    #: kinds apart without a front matter nobody reads
    max_signals: int = Field(24, ge=1)
