"""A postmortem's YAML front matter: the fields, their checks, and reading/writing it.

A postmortem is Markdown that opens with `---`, YAML, `---`. The fields are what the library
lists, searches and compares; the body is for people. Unknown keys are kept (a team may add
its own), wrong types and missing required keys are damage, reported with the field's name.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from infersight.yamltext import parse_yaml

Status = Literal["draft", "review", "final"]
Severity = Literal["sev1", "sev2", "sev3", "sev4", "unset"]
ID_PATTERN = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}-[a-z0-9][a-z0-9-]{0,80}$"
_FENCE = "---"


class FrontMatterError(ValueError):
    """Front matter that cannot be read; `str()` is one line naming what is wrong."""


class Signature(BaseModel):
    """What the incident looked like to the engine, for similarity beyond words."""

    model_config = ConfigDict(extra="allow")

    #: confirmed causes and symptoms, earliest onset first
    onset_order: list[str] = Field(default_factory=list)
    #: per signal, the strongest reading as a multiple of its baseline (0.5: halved)
    figures: dict[str, float] = Field(default_factory=dict)


class FrontMatter(BaseModel):
    model_config = ConfigDict(extra="allow")

    id: str = Field(pattern=ID_PATTERN)
    title: str = Field(min_length=1)
    status: Status = "draft"
    severity: Severity = "unset"
    #: the day the incident began (UTC)
    date: dt.date
    started: dt.datetime | None = None
    detected: dt.datetime | None = None
    resolved: dt.datetime | None = None
    written: dt.date | None = None
    services: list[str] = Field(default_factory=list)
    layers: list[str] = Field(default_factory=list)
    root_causes: list[str] = Field(default_factory=list)
    signals: list[str] = Field(default_factory=list)
    #: what ended it, in a few words ("RAM for the vector DB node"): the line a report shows
    fixed_by: str = ""
    signature: Signature = Field(default_factory=Signature)

    @field_validator("services", "layers", "root_causes", "signals", mode="before")
    @classmethod
    def _list(cls, v: Any) -> Any:
        if v is None:
            return []
        return [_line(x) for x in v] if isinstance(v, list) else v

    @field_validator("title", "fixed_by", mode="before")
    @classmethod
    def _text(cls, v: Any) -> Any:
        return "" if v is None else _line(v)


def _line(v: Any) -> Any:
    """Text fields are one line, runs of white space as one space (YAML itself folds line
    breaks such as U+0085 inside plain text, so a field would not read back as written)."""
    return " ".join(v.split()) if isinstance(v, str) else v


def _problem(exc: ValidationError) -> str:
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err["loc"]) or "front matter"
    more = f" (and {len(exc.errors()) - 1} more)" if len(exc.errors()) > 1 else ""
    return f"{where}: {err['msg']}{more}"


def split(text: str) -> tuple[str, str]:
    """The YAML between the opening `---` and the next `---` line, and the body after it."""
    lines = text.split("\n")
    if not lines or lines[0].strip() != _FENCE:
        raise FrontMatterError("no front matter: the file must begin with a '---' line")
    for i, line in enumerate(lines[1:], 1):
        if line.rstrip() == _FENCE:
            return "\n".join(lines[1:i]), "\n".join(lines[i + 1 :])
    raise FrontMatterError("front matter never closed: add a '---' line after it")


def parse(text: str) -> tuple[FrontMatter, str]:
    """The front matter and the body of a postmortem; raises FrontMatterError."""
    head, body = split(text)
    try:
        data = parse_yaml(head)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" at line {mark.line + 2}" if mark is not None else ""
        raise FrontMatterError(f"front matter is not YAML{at}") from None
    if not isinstance(data, dict):
        raise FrontMatterError("front matter is not a mapping of fields")
    try:
        return FrontMatter.model_validate(data), body
    except ValidationError as exc:
        raise FrontMatterError(_problem(exc)) from None


def _iso(v: dt.datetime | None) -> str | None:
    if v is None:
        return None
    return v.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def dump(fm: FrontMatter) -> str:
    """The front matter as the block that opens a file (fences included), fields in a fixed
    order so diffs in git stay small."""
    data = fm.model_dump(mode="python")
    for key in ("started", "detected", "resolved"):
        data[key] = _iso(data[key])
    text = yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100)
    return f"{_FENCE}\n{text}{_FENCE}\n"


def slug(text: str, limit: int = 48) -> str:
    """Lower-case words joined by hyphens, whole words up to `limit` characters: an id's
    tail."""
    out = ""
    for word in re.findall(r"[a-z0-9]+", text.lower()):
        longer = f"{out}-{word}" if out else word
        if len(longer) > limit:
            out = out or word[:limit]  # one word longer than the limit: its start
            break
        out = longer
    return out or "incident"
