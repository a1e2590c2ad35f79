"""YAML parsing with libyaml's C parser where PyYAML has it (the rule and catalog files load
several times faster), the pure-Python safe parser otherwise. Both build plain data only."""

from __future__ import annotations

from typing import Any

import yaml

_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def parse_yaml(text: str) -> Any:
    """The data in `text`; raises yaml.YAMLError on bad YAML, like yaml.safe_load."""
    return yaml.load(text, Loader=_LOADER)
