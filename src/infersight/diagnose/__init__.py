"""Diagnosis: the layered walk over the knowledge base (seed §2–5).

API::

    diagnose(windows, *, detection=None, kb=None, at=None, source=None, config=None) -> Diagnosis
    load_kb(extra_dirs=()) -> KnowledgeBase      built-in rules + user folders of YAML rules
    DiagnoseConfig(**overrides)                  the engine's constants, each with its reason
"""

from infersight.diagnose.config import DiagnoseConfig
from infersight.diagnose.engine import diagnose
from infersight.diagnose.kb import KBError, KnowledgeBase, Rule, load_kb
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
    "UnexplainedChange",
    "diagnose",
    "load_kb",
]
