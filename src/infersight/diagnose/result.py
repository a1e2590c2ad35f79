"""The Diagnosis: what the engine concluded, and every figure it concluded it from.

Reports read only this (plus, for plots, the frames it was computed on). It round-trips
through JSON (`to_dict` / `from_dict`) with a versioned schema.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from infersight.kube.changes import ClusterChange
from infersight.provenance import QueryRun

SCHEMA_VERSION = 10
#: versions `from_dict` reads (1 had no `unchecked_causes`, 2 no `refute_undecided`, 3 no
#: `judged` nor `coverage`, 4 no `unchecked_predictions`, 5 no root's place on the path, 6 no
#: root's `raw_confidence`, 7 no `queries_run`, 8 no root's `direct`)
READABLE_VERSIONS = (1, 2, 3, 4, 5, 6, 7, 8, 9, 10)

Verdict = Literal["confirmed", "refuted", "inconclusive"]


@dataclass(frozen=True)
class Evidence:
    """One observation for or against a hypothesis: a signal on an instance over a window."""

    signal: str
    instance: str
    kind: str  # deviation | trend | fleet_outlier | absent | level | event | normal
    supports: bool  # True: speaks for the hypothesis; False: against it
    statement: str  # one sentence a person reads, figures and units included
    window_start: float
    window_end: float
    baseline: float | None = None
    observed: float | None = None
    unit: str = ""
    onset: float | None = None


@dataclass(frozen=True)
class HypothesisResult:
    id: str
    title: str
    layer: str
    verdict: Verdict
    confidence: float  # 0..1, meaningful for confirmed ones
    seed: str  # section of the field guide
    onset: float | None = None
    instances: tuple[str, ...] = ()
    evidence: tuple[Evidence, ...] = ()
    missing_signals: tuple[str, ...] = ()  # why it is inconclusive
    explains: tuple[str, ...] = ()  # confirmed hypothesis ids this one explains
    explained_by: tuple[str, ...] = ()
    remedy: str = ""
    runbook: str | None = None
    is_root: bool = False
    #: confirmed, but a check that would refute it could not be decided (data missing, or
    #: only readings that are not trusted): it stands unchallenged on that count
    refute_undecided: bool = False
    refute_missing: tuple[str, ...] = ()  # the signals that check lacked
    #: confirmed on what could be checked: predictions on these signals could not be (absent
    #: from the data, and the rule does not require them)
    unchecked_predictions: tuple[str, ...] = ()


@dataclass(frozen=True)
class RootCause:
    hypothesis: str  # id: a rule's, or `change@NODE` for a change no rule names
    rank: int  # 1 = most likely
    #: calibrated (diagnose/calibrate.py): about how often answers given at it were right
    confidence: float
    chain: tuple[str, ...]  # hypothesis ids from this root to the user-visible symptom
    #: where on the request path it sits (`part:instance`, `hop`), the first of `nodes`
    node: str = ""
    nodes: tuple[str, ...] = ()
    #: the node where the work piled up on the way to the symptom ("" when none stood out)
    bottleneck: str = ""
    #: it sent more work down the path (traffic, a cache's misses, a lost replica's share)
    trigger: bool = False
    via: tuple[str, ...] = ()  # nodes from the root to the symptom
    #: no rule names its mechanism: the answer is the node and what changed there
    unnamed: bool = False
    #: a limit named beside a trigger: the id of the root that sent the work it could not take
    triggered_by: str = ""
    #: the engine's own score before calibration (None in documents older than version 7)
    raw_confidence: float | None = None
    #: the walk ended on one of the naming rule's own signals (False: the rule was read from
    #: the effects of what ended there, or is a limit met by another root's work)
    direct: bool = True


@dataclass(frozen=True)
class UncheckedCause:
    """A cause that would explain a root (or a symptom no confirmed cause explains) and that
    this data cannot decide: the signals its rule requires are missing. The root may be its
    effect, so it is named, with what to add to check it, rather than left in the long list."""

    hypothesis: str  # id of the inconclusive hypothesis
    would_explain: tuple[str, ...]  # confirmed hypothesis ids it would be upstream of
    missing: tuple[str, ...]  # the required signals the data lacks


@dataclass(frozen=True)
class UnexplainedChange:
    """An anomalous signal no confirmed hypothesis accounts for (statistical fallback)."""

    signal: str
    instance: str
    layer: str
    score: float
    statement: str
    onset: float | None = None
    baseline: float | None = None
    observed: float | None = None


@dataclass(frozen=True)
class LayerCoverage:
    """How much of one layer could be read: the catalog's signals in it, those with at least
    one finite reading in the incident window, and the instances those readings came from."""

    layer: str
    signals: int  # canonical signals the catalog has in this layer
    readable: tuple[str, ...] = ()
    instances: tuple[str, ...] = ()


@dataclass(frozen=True)
class Diagnosis:
    start: float
    end: float
    step: float
    healthy: bool  # nothing wrong found; says so plainly
    summary: str
    scope: dict[str, Any]
    root_causes: tuple[RootCause, ...] = ()
    hypotheses: tuple[HypothesisResult, ...] = ()
    unexplained: tuple[UnexplainedChange, ...] = ()
    next_actions: tuple[str, ...] = ()
    missing_signals: dict[str, str] = field(default_factory=dict)
    source: dict[str, str] = field(default_factory=dict)
    unchecked_causes: tuple[UncheckedCause, ...] = ()
    #: False when too little was readable to judge (no series, every query failed, only NaN):
    #: then `healthy` is False too and `summary` says why; never a silent all-clear
    judged: bool = True
    coverage: tuple[LayerCoverage, ...] = ()  # per layer, in the layers' order
    #: the queries the incident window's series came from, as sent (`provenance.QueryRun`);
    #: () when the data came from no query (a simulator's signals, an older bundle)
    queries_run: tuple[QueryRun, ...] = ()
    #: what changed in the cluster in the window (`kube/changes.py`); () off Kubernetes
    cluster_changes: tuple[ClusterChange, ...] = ()
    #: the pods placed on nodes in the window, by name (`PodMap.to_dict`); {} off Kubernetes
    pods: dict[str, dict[str, Any]] = field(default_factory=dict)
    schema_version: int = SCHEMA_VERSION

    def hypothesis(self, hid: str) -> HypothesisResult | None:
        return next((h for h in self.hypotheses if h.id == hid), None)

    def by_verdict(self, verdict: Verdict) -> list[HypothesisResult]:
        return [h for h in self.hypotheses if h.verdict == verdict]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Diagnosis:
        """The diagnosis from its JSON form; older documents are read as this version (no
        unchecked causes in version 1, no undecided refutes before version 3; before version 4 a
        diagnosis was taken as judged, its coverage unrecorded; before version 8 the queries
        that ran were not recorded; before version 10 no cluster changes or pods)."""
        if data.get("schema_version") not in READABLE_VERSIONS:
            raise ValueError(
                f"diagnosis schema version {data.get('schema_version')!r} is not one of "
                f"{READABLE_VERSIONS}; re-run `infersight diagnose` with this version"
            )
        hyps = tuple(
            HypothesisResult(
                **{
                    **h,
                    "instances": tuple(h["instances"]),
                    "evidence": tuple(Evidence(**e) for e in h["evidence"]),
                    "missing_signals": tuple(h["missing_signals"]),
                    "explains": tuple(h["explains"]),
                    "explained_by": tuple(h["explained_by"]),
                    "refute_missing": tuple(h.get("refute_missing", ())),
                    "unchecked_predictions": tuple(h.get("unchecked_predictions", ())),
                }
            )
            for h in data["hypotheses"]
        )
        return cls(
            start=data["start"],
            end=data["end"],
            step=data["step"],
            healthy=data["healthy"],
            summary=data["summary"],
            scope=data["scope"],
            root_causes=tuple(
                RootCause(
                    **{
                        **r,
                        "chain": tuple(r["chain"]),
                        "nodes": tuple(r.get("nodes", ())),
                        "via": tuple(r.get("via", ())),
                    }
                )
                for r in data["root_causes"]
            ),
            hypotheses=hyps,
            unexplained=tuple(UnexplainedChange(**u) for u in data["unexplained"]),
            next_actions=tuple(data["next_actions"]),
            missing_signals=dict(data["missing_signals"]),
            source=dict(data["source"]),
            unchecked_causes=tuple(
                UncheckedCause(u["hypothesis"], tuple(u["would_explain"]), tuple(u["missing"]))
                for u in data.get("unchecked_causes", [])
            ),
            judged=data.get("judged", True),
            coverage=tuple(
                LayerCoverage(c["layer"], c["signals"], tuple(c["readable"]), tuple(c["instances"]))
                for c in data.get("coverage", [])
            ),
            queries_run=tuple(QueryRun(**q) for q in data.get("queries_run", [])),
            cluster_changes=tuple(
                ClusterChange.from_dict(c) for c in data.get("cluster_changes", [])
            ),
            pods={k: dict(v) for k, v in data.get("pods", {}).items()},
        )
