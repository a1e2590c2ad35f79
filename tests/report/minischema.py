"""A minimal JSON Schema validator for the subset diagnosis.schema.json uses.

Keywords: type (name or list), properties, required, additionalProperties (bool or schema),
items, minItems, enum, const, minimum, maximum, exclusiveMinimum, $ref to "#/$defs/<name>". Any
other keyword is an error, so the schema cannot silently use something this does not check.
"""

from __future__ import annotations

from typing import Any

_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "number": (int, float),
    "integer": (int,),
    "boolean": (bool,),
    "null": (type(None),),
}
_KNOWN = {
    "$schema", "$id", "$defs", "$ref", "title", "description", "type", "properties",
    "required", "additionalProperties", "items", "enum", "const", "minimum", "maximum",
    "exclusiveMinimum", "minItems",
}  # fmt: skip


def _is(value: Any, name: str) -> bool:
    if isinstance(value, bool) and name in ("number", "integer"):
        return False
    return isinstance(value, _TYPES[name])


def errors(value: Any, schema: dict[str, Any], root: dict[str, Any], path: str = "$") -> list[str]:
    """Every violation of `schema` by `value`, as "path: what"."""
    unknown = set(schema) - _KNOWN
    if unknown:
        return [f"{path}: schema uses unsupported keywords {sorted(unknown)}"]
    if "$ref" in schema:
        name = schema["$ref"].removeprefix("#/$defs/")
        return errors(value, root["$defs"][name], root, path)
    out: list[str] = []
    if "type" in schema:
        names = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if not any(_is(value, n) for n in names):
            return [f"{path}: {type(value).__name__} is not {'/'.join(names)}"]
    if "const" in schema and value != schema["const"]:
        out.append(f"{path}: {value!r} is not {schema['const']!r}")
    if "enum" in schema and value not in schema["enum"]:
        out.append(f"{path}: {value!r} not in {schema['enum']}")
    if _is(value, "number"):
        if "minimum" in schema and value < schema["minimum"]:
            out.append(f"{path}: {value} < {schema['minimum']}")
        if "maximum" in schema and value > schema["maximum"]:
            out.append(f"{path}: {value} > {schema['maximum']}")
        if "exclusiveMinimum" in schema and value <= schema["exclusiveMinimum"]:
            out.append(f"{path}: {value} <= {schema['exclusiveMinimum']}")
    if isinstance(value, dict):
        props = schema.get("properties", {})
        out += [f"{path}: missing {k!r}" for k in schema.get("required", []) if k not in value]
        extra = schema.get("additionalProperties", True)
        for k, v in value.items():
            if k in props:
                out += errors(v, props[k], root, f"{path}.{k}")
            elif extra is False:
                out.append(f"{path}: unexpected {k!r}")
            elif isinstance(extra, dict):
                out += errors(v, extra, root, f"{path}.{k}")
    if isinstance(value, list) and len(value) < schema.get("minItems", 0):
        out.append(f"{path}: {len(value)} items, fewer than {schema['minItems']}")
    if isinstance(value, list) and "items" in schema:
        for i, v in enumerate(value):
            out += errors(v, schema["items"], root, f"{path}[{i}]")
    return out


def validate(value: Any, schema: dict[str, Any]) -> list[str]:
    return errors(value, schema, schema)
