"""`{{ name }}` placeholders: found at load (each must name a parameter or a capture) and
filled at run time, one whole string at a time, so a value can never split into several
arguments or escape its field."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

PLACEHOLDER = re.compile(r"\{\{\s*([a-z_][a-z0-9_]*)\s*\}\}")
_WHOLE = re.compile(r"\{\{\s*([a-z_][a-z0-9_]*)\s*\}\}")


class TemplateError(ValueError):
    """A placeholder without a value."""


def names_in(data: Any) -> Iterator[str]:
    """Every placeholder name in a nested structure of strings, lists and dicts."""
    if isinstance(data, str):
        yield from PLACEHOLDER.findall(data)
    elif isinstance(data, Mapping):
        for k, v in data.items():
            yield from names_in(k)
            yield from names_in(v)
    elif isinstance(data, list | tuple):
        for v in data:
            yield from names_in(v)


def text(value: Any) -> str:
    """How a typed value reads inside a string."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def render(data: Any, values: Mapping[str, Any]) -> Any:
    """`data` with every placeholder filled. A string that is one placeholder and nothing else
    takes the value's type (a JSON body's number stays a number)."""
    if isinstance(data, str):
        whole = _WHOLE.fullmatch(data)
        if whole:
            return _get(whole.group(1), values)
        return PLACEHOLDER.sub(lambda m: text(_get(m.group(1), values)), data)
    if isinstance(data, Mapping):
        return {render(k, values): render(v, values) for k, v in data.items()}
    if isinstance(data, list | tuple):
        return [render(v, values) for v in data]
    return data


def _get(name: str, values: Mapping[str, Any]) -> Any:
    if name not in values:
        raise TemplateError(f"{{{{{name}}}}} has no value yet")
    return values[name]
