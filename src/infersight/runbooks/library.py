"""Loading runbooks: the starter set shipped in the package plus folders of the user's own.
A user's file with a starter's id replaces it. Errors name the file and the field."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path

import yaml
from pydantic import ValidationError

from infersight import userfile
from infersight.runbooks.model import Runbook, RunbookError
from infersight.yamltext import parse_yaml


def _loc(err: ValidationError) -> str:
    parts = []
    for e in err.errors():
        loc = ".".join(str(p) for p in e["loc"]) or "(top)"
        parts.append(f"{loc}: {e['msg'].removeprefix('Value error, ')}")
    return "; ".join(parts)


def parse_runbook(text: str, origin: str) -> Runbook:
    """One runbook from YAML text; RunbookError names `origin` and the failing field."""
    try:
        raw = parse_yaml(text)
    except yaml.YAMLError as exc:
        why = " ".join(str(exc).split())
        raise RunbookError(f"{origin}: not valid YAML: {why}") from None
    if not isinstance(raw, dict):
        raise RunbookError(f"{origin}: a runbook file holds one mapping (id, title, steps, …)")
    try:
        book = Runbook.model_validate(raw)
    except ValidationError as exc:
        raise RunbookError(f"{origin}: {_loc(exc)}") from None
    stem = Path(origin).stem
    if stem != book.id:
        raise RunbookError(f"{origin}: id: {book.id!r} differs from the file name {stem!r}")
    return book


@dataclass(frozen=True)
class Library:
    books: tuple[Runbook, ...]
    origins: dict[str, str]

    def get(self, rid: str) -> Runbook | None:
        return next((b for b in self.books if b.id == rid), None)

    def ids(self) -> list[str]:
        return [b.id for b in self.books]


@cache
def _starters() -> tuple[tuple[Runbook, str], ...]:
    root = resources.files("infersight.runbooks").joinpath("starters")
    out = []
    for entry in sorted(root.iterdir(), key=lambda p: p.name):
        if entry.name.endswith(".yaml"):
            origin = f"runbooks/starters/{entry.name}"
            out.append((parse_runbook(entry.read_text("utf-8"), origin), origin))
    return tuple(out)


def load_library(extra_dirs: Iterable[Path | str] = ()) -> Library:
    """The starter runbooks plus every *.yaml in `extra_dirs` (later ids replace earlier)."""
    books: dict[str, Runbook] = {}
    origins: dict[str, str] = {}
    for book, origin in _starters():
        books[book.id], origins[book.id] = book, origin
    for d in extra_dirs:
        path = Path(d)
        if not path.is_dir():
            raise RunbookError(f"{path}: not a folder of runbook files")
        for f in sorted([*path.glob("*.yaml"), *path.glob("*.yml")]):
            try:
                text = userfile.read_text(f)
            except userfile.UserFileError as exc:
                raise RunbookError(str(exc)) from None
            book = parse_runbook(text, str(f))
            books[book.id], origins[book.id] = book, str(f)
    _one_per_stack(books, origins)
    return Library(tuple(sorted(books.values(), key=lambda b: b.id)), origins)


def _one_per_stack(books: dict[str, Runbook], origins: dict[str, str]) -> None:
    """Two ways of one remedy for the same stack leave nothing to choose between them."""
    seen: dict[tuple[str, frozenset[str]], str] = {}
    for book in sorted(books.values(), key=lambda b: b.id):
        key = (book.remedy, frozenset(book.stack))
        if key in seen:
            stack = " + ".join(book.stack) or "any stack"
            raise RunbookError(
                f"{origins[book.id]}: stack: {seen[key]} already does {book.remedy} on {stack}"
            )
        seen[key] = book.id
