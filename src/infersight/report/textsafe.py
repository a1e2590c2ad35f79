"""Text that came from data (instance names, paths, notes, label values) made safe to print.

A terminal obeys escape sequences, so control characters are shown as `\\xNN` instead of sent;
rich reads `[...]` as markup, so text put into a markup string is escaped (`for_markup`); Slack
reads `<...>` as a mention or a link (`<!channel>`, `<http://x|click>`), so its text has `&`,
`<` and `>` escaped as its message formatting asks (`for_slack`).
"""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

from rich.markup import escape

from infersight.controls import shown

T = TypeVar("T")


def clean(text: object, one_line: bool = False) -> str:
    """`text` with every control character shown as `\\xNN` (newlines too when `one_line`)."""
    return shown(text, one_line)


def for_markup(text: object) -> str:
    """`text` cleaned and escaped, to embed in a rich markup string."""
    return escape(clean(text))


def for_slack(text: object) -> str:
    """`text` cleaned to one line, with `&`, `<`, `>` written as Slack's entities: shown as
    typed, never read as a mention, a channel ping or a link with a disguised target."""
    one = clean(text, one_line=True)
    return one.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def clean_data(obj: T) -> T:
    """Every string inside `obj` (dataclasses, tuples, lists, dicts) cleaned; the rest as is."""
    return _walk(obj)  # type: ignore[no-any-return]


def _walk(obj: Any) -> Any:
    if isinstance(obj, str):
        return clean(obj)
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        changes = {f.name: _walk(getattr(obj, f.name)) for f in dataclasses.fields(obj) if f.init}
        return dataclasses.replace(obj, **changes)
    if isinstance(obj, tuple):
        return tuple(_walk(v) for v in obj)
    if isinstance(obj, list):
        return [_walk(v) for v in obj]
    if isinstance(obj, dict):
        return {_walk(k): _walk(v) for k, v in obj.items()}
    return obj
