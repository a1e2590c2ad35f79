"""One identity per machine or pod, whatever exporter scraped it.

A GPU node is scraped as `node-7:8000` (the engine), `node-7:9400` (dcgm-exporter, which also
labels it `Hostname`) and `node-7:9100` (node_exporter). All three must meet as `node-7`, so a
hot GPU and the slow requests on that node are read together.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from infersight.exporters import IDENTITY_LABELS

_SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*://", re.I)
_PORT = re.compile(r":\d+$")


def host_of(instance: str) -> str:
    """`node-7:9400` → `node-7`; `redis://cache-1:6379` → `cache-1`; `[::1]:80` → `::1`."""
    s = _SCHEME.sub("", instance).split("/", 1)[0]
    if s.startswith("["):
        return s[1:].split("]", 1)[0]
    if s.count(":") > 1:  # a bare IPv6 address, no port
        return s
    return _PORT.sub("", s)


def resolve(labels: Mapping[str, str], order: Sequence[str] = IDENTITY_LABELS) -> str:
    """The identity of a series: the first identity label present, `instance` without its port.

    Series with none of the labels (a fleet-wide aggregate) get "*".
    """
    for name in order:
        value = labels.get(name)
        if value:
            return host_of(value) if name == "instance" else value
    return "*"
