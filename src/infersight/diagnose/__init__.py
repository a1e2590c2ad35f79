"""Diagnosis: the layered walk over the knowledge base (seed §2–5).

API::

    diagnose(windows, *, detection=None, kb=None, at=None, source=None, config=None,
             path=None, topology=None) -> Diagnosis
    load_topology(path) -> Topology              edges of the request path a user declares
    load_kb(extra_dirs=()) -> KnowledgeBase      built-in rules + user folders of YAML rules
    DiagnoseConfig(**overrides)                  the engine's constants, each with its reason
"""

from infersight.diagnose.config import DiagnoseConfig
from infersight.diagnose.engine import diagnose
from infersight.diagnose.kb import KBError, KnowledgeBase, Rule, load_kb
from infersight.diagnose.path.topology import Topology, TopologyError, load_topology
from infersight.diagnose.result import (
    Diagnosis,
    Evidence,
    HypothesisResult,
    RootCause,
    UnexplainedChange,
)

__all__ = [
    "DiagnoseConfig",
    "Diagnosis",
    "Evidence",
    "HypothesisResult",
    "KBError",
    "KnowledgeBase",
    "RootCause",
    "Rule",
    "Topology",
    "TopologyError",
    "UnexplainedChange",
    "diagnose",
    "load_kb",
    "load_topology",
]
